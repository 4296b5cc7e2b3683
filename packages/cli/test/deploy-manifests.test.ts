import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DaemonSet } from "kubernetes-models/apps/v1/DaemonSet";
import { Deployment } from "kubernetes-models/apps/v1/Deployment";
import { PodDisruptionBudget } from "kubernetes-models/policy/v1/PodDisruptionBudget";
import { ConfigMap } from "kubernetes-models/v1/ConfigMap";
import { Namespace } from "kubernetes-models/v1/Namespace";
import { Secret } from "kubernetes-models/v1/Secret";
import { Service } from "kubernetes-models/v1/Service";
import ts from "typescript";
import { parse, parseAllDocuments } from "yaml";
import { main } from "../src/index.js";

/**
 * The deployment files in deploy/: the Kubernetes manifests are checked offline against the
 * Kubernetes API's schemas (kubernetes-models' generated validators for types and required
 * fields, and its declarations, through the TypeScript checker, for unknown fields, as
 * `kubectl apply`'s strict field validation would), then for the structure the roles need; the
 * systemd units with `systemd-analyze verify` where it is installed, and by their settings.
 */

const repo = path.resolve(__dirname, "../../..");
const kubeDir = path.join(repo, "deploy/kubernetes");
const systemdDir = path.join(repo, "deploy/systemd");
const NAMESPACE = "x-sandbox";

/** What each role's help lists: its flags (without the dashes) and environment variables. */
interface RoleCli {
  flags: Set<string>;
  env: Set<string>;
}

/** Prints `x ARGV` (a --help) in this process and returns what it printed. */
async function helpOf(argv: string[]): Promise<string> {
  let text = "";
  const collect = (t: string | Uint8Array) => {
    text += typeof t === "string" ? t : Buffer.from(t).toString();
  };
  // `x serve --help` writes to the process's stdout
  const write = jest.spyOn(process.stdout, "write").mockImplementation((t: string | Uint8Array) => {
    collect(t);
    return true;
  });
  try {
    const code = await main(argv, { out: collect, err: collect, tty: false });
    if (code !== 0) throw new Error(`x ${argv.join(" ")} exited with ${code}: ${text}`);
  } finally {
    write.mockRestore();
  }
  return text;
}

function cliOf(help: string): RoleCli {
  return {
    flags: new Set([...help.matchAll(/(?:^|[\s,(])--([a-z][a-z0-9-]*)/g)].map((m) => m[1]!)),
    env: new Set([...help.matchAll(/\bX_[A-Z][A-Z0-9_]*\b/g)].map((m) => m[0])),
  };
}

/** The roles' flags and variables as `x ROLE --help` lists them (`x node`: `x serve`'s too). */
async function rolesCli(): Promise<Record<string, RoleCli>> {
  const serve = await helpOf(["serve", "--help"]);
  return {
    node: cliOf(serve + (await helpOf(["node", "--help"]))),
    api: cliOf(await helpOf(["api", "--help"])),
    proxy: cliOf(await helpOf(["proxy", "--help"])),
  };
}

/** The flags the cluster plan gives each role (beyond `x serve`'s, for the node). */
const PLAN_FLAGS: Record<string, string[]> = {
  node: [
    "name",
    "advertise",
    "cluster-secret",
    "database-url",
    "domain",
    "data-dir",
    "network-prefix",
    "network-cidr",
  ],
  api: ["port", "host", "database-url", "node-timeout"],
  proxy: ["port", "host", "database-url", "domain"],
};

/** What each role cannot start without: a flag or its environment variable. */
const ROLE_REQUIRED: Record<string, [flag: string, env: string][]> = {
  node: [
    ["database-url", "X_DATABASE_URL"],
    ["cluster-secret", "X_CLUSTER_SECRET"],
  ],
  api: [["database-url", "X_DATABASE_URL"]],
  proxy: [["database-url", "X_DATABASE_URL"]],
};

// biome-ignore lint/suspicious/noExplicitAny: the models take any object and validate it
type ModelClass = new (data: any) => { validate(): void };
/** Per apiVersion/kind: the generated model (validator) and its declared interface. */
const MODELS: Record<string, { model: ModelClass; module: string; iface: string }> = {
  "v1/Namespace": { model: Namespace, module: "kubernetes-models/v1/Namespace", iface: "INamespace" },
  "v1/Secret": { model: Secret, module: "kubernetes-models/v1/Secret", iface: "ISecret" },
  "v1/ConfigMap": { model: ConfigMap, module: "kubernetes-models/v1/ConfigMap", iface: "IConfigMap" },
  "v1/Service": { model: Service, module: "kubernetes-models/v1/Service", iface: "IService" },
  "apps/v1/Deployment": {
    model: Deployment,
    module: "kubernetes-models/apps/v1/Deployment",
    iface: "IDeployment",
  },
  "apps/v1/DaemonSet": {
    model: DaemonSet,
    module: "kubernetes-models/apps/v1/DaemonSet",
    iface: "IDaemonSet",
  },
  "policy/v1/PodDisruptionBudget": {
    model: PodDisruptionBudget,
    module: "kubernetes-models/policy/v1/PodDisruptionBudget",
    iface: "IPodDisruptionBudget",
  },
};

// Loose shapes of what the structural checks read (the schemas above vouch for the rest).
interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: {
    secretKeyRef?: { name: string; key: string; optional?: boolean };
    configMapKeyRef?: { name: string; key: string; optional?: boolean };
    fieldRef?: { fieldPath: string };
  };
}
interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  env?: EnvVar[];
  ports?: { name?: string; containerPort: number }[];
  readinessProbe?: { httpGet?: { path?: string; port: number | string } };
  lifecycle?: { preStop?: { exec?: { command?: string[] } } };
  securityContext?: { privileged?: boolean };
  volumeMounts?: { name: string; mountPath: string; readOnly?: boolean; mountPropagation?: string }[];
}
interface PodSpec {
  hostNetwork?: boolean;
  hostPID?: boolean;
  terminationGracePeriodSeconds?: number;
  containers: Container[];
  volumes?: { name: string; hostPath?: { path: string } }[];
}
interface Manifest {
  file: string;
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: {
    replicas?: number;
    minAvailable?: number;
    selector?: { matchLabels?: Record<string, string> } & Record<string, string>;
    template?: { metadata?: { labels?: Record<string, string> }; spec: PodSpec };
    ports?: { port: number; targetPort?: number | string }[];
  };
  data?: Record<string, string>;
  stringData?: Record<string, string>;
}

function kustomization(): { namespace?: string; resources: string[] } {
  return parse(readFileSync(path.join(kubeDir, "kustomization.yaml"), "utf8"));
}

/** Every document of every file the kustomization lists, in order. */
function loadManifests(): Manifest[] {
  const out: Manifest[] = [];
  for (const file of kustomization().resources) {
    for (const doc of parseAllDocuments(readFileSync(path.join(kubeDir, file), "utf8"))) {
      if (doc.errors.length > 0) throw new Error(`${file}: ${doc.errors.map((e) => e.message).join("; ")}`);
      const value = doc.toJS();
      if (value !== null) out.push({ ...value, file });
    }
  }
  return out;
}

const id = (m: Manifest) => `${m.file}: ${m.kind}/${m.metadata?.name}`;
const withoutFile = ({ file: _file, ...doc }: Manifest) => doc;
const workloads = (ms: Manifest[]) => ms.filter((m) => m.kind === "Deployment" || m.kind === "DaemonSet");
const one = <T>(items: T[], what: string): T => {
  if (items.length !== 1) throw new Error(`expected one ${what}, found ${items.length}`);
  return items[0]!;
};
const byName = (ms: Manifest[], kind: string, name: string) =>
  one(
    ms.filter((m) => m.kind === kind && m.metadata.name === name),
    `${kind}/${name}`,
  );
const matches = (selector: Record<string, string>, labels: Record<string, string> = {}) =>
  Object.keys(selector).length > 0 && Object.entries(selector).every(([k, v]) => labels[k] === v);

/** Flags in an argument list, `--flag value` or `--flag=value`, without the dashes. */
const flagsOf = (args: string[]) =>
  args.filter((a) => a.startsWith("--")).map((a) => a.slice(2).split("=")[0]!);
/** The value after `--flag` (or in `--flag=value`). */
function flagValue(args: string[], flag: string): string | undefined {
  const i = args.findIndex((a) => a === `--${flag}` || a.startsWith(`--${flag}=`));
  if (i < 0) return undefined;
  return args[i]!.includes("=") ? args[i]!.split("=").slice(1).join("=") : args[i + 1];
}

/**
 * Errors of `x ROLE ARGS` with the environment variables `env` set: flags its help does not
 * list, a required setting given neither way, and (unless `sharedEnv`, an env file several
 * roles read) variables it does not read.
 */
function roleErrors(
  roles: Record<string, RoleCli>,
  role: string,
  args: string[],
  env: string[],
  sharedEnv = false,
): string[] {
  const cli = roles[role];
  if (!cli) return [`unknown role '${role}'`];
  const errors = flagsOf(args)
    .filter((f) => !cli.flags.has(f))
    .map((f) => `x ${role} --help lists no --${f}`);
  for (const [flag, variable] of ROLE_REQUIRED[role] ?? [])
    if (!flagsOf(args).includes(flag) && !env.includes(variable))
      errors.push(`x ${role} needs --${flag} or ${variable}`);
  const read = sharedEnv ? new Set(Object.values(roles).flatMap((r) => [...r.env])) : cli.env;
  for (const v of env) if (!read.has(v)) errors.push(`x ${role} reads no ${v}`);
  return errors;
}

/**
 * Type-checks every document against its kind's declared interface: an object literal with a
 * field the API does not have (a misspelt `hostNetwork`, a field at the wrong level) is an
 * error, as it is for the API server's strict field validation.
 */
function unknownFieldErrors(ms: Manifest[]): string[] {
  const file = path.join(__dirname, "__deploy_manifests__.ts");
  const lines = ms.map((m, i) => {
    const model = MODELS[`${m.apiVersion}/${m.kind}`];
    if (!model) return `export const doc${i} = null;`;
    return `export const doc${i}: import("${model.module}").${model.iface} = ${JSON.stringify(withoutFile(m))};`;
  });
  const options: ts.CompilerOptions = {
    strict: true,
    noEmit: true,
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    skipLibCheck: true,
    types: [],
    lib: ["lib.es2022.d.ts"],
  };
  const host = ts.createCompilerHost(options);
  const source = ts.createSourceFile(file, lines.join("\n"), ts.ScriptTarget.ES2022, true);
  const getSourceFile = host.getSourceFile.bind(host);
  host.getSourceFile = (name, ...rest) =>
    path.resolve(name) === file ? source : getSourceFile(name, ...rest);
  const fileExists = host.fileExists.bind(host);
  host.fileExists = (name) => path.resolve(name) === file || fileExists(name);
  const program = ts.createProgram([file], options, host);
  return [...program.getSyntacticDiagnostics(source), ...program.getSemanticDiagnostics(source)].map((d) => {
    const line = d.start === undefined ? -1 : source.getLineAndCharacterOfPosition(d.start).line;
    const m = ms[line];
    return `${m ? id(m) : "?"}: ${ts.flattenDiagnosticMessageText(d.messageText, " ")}`;
  });
}

/** Sections of a systemd unit or env file: key → every value it is given. */
function parseIni(text: string): Record<string, Record<string, string[]>> {
  let current: Record<string, string[]> = {};
  const sections: Record<string, Record<string, string[]>> = { "": current };
  for (const raw of text.split("\n")) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#") || line.startsWith(";")) continue;
    const section = /^\[(.+)\]$/.exec(line);
    if (section) {
      current = sections[section[1]!] ?? {};
      sections[section[1]!] = current;
      continue;
    }
    const eq = line.indexOf("=");
    if (eq <= 0) throw new Error(`not a setting: ${line}`);
    const key = line.slice(0, eq).trim();
    current[key] = [...(current[key] ?? []), line.slice(eq + 1).trim()];
  }
  return sections;
}

function onPath(command: string): boolean {
  return spawnSync("sh", ["-c", `command -v ${command}`]).status === 0;
}

let roles: Record<string, RoleCli>;
beforeAll(async () => {
  roles = await rolesCli();
});

it("the CLI's help lists the flags the cluster plan gives each role", () => {
  for (const [role, flags] of Object.entries(PLAN_FLAGS))
    expect({ role, missing: flags.filter((f) => !roles[role]!.flags.has(f)) }).toEqual({ role, missing: [] });
});

describe("deploy/kubernetes", () => {
  const manifests = loadManifests();

  it("lists every manifest of the directory in its kustomization, all in the namespace", () => {
    const files = readdirSync(kubeDir).filter((f) => /\.ya?ml$/.test(f) && f !== "kustomization.yaml");
    expect([...kustomization().resources].sort()).toEqual(files.sort());
    expect(kustomization().namespace).toBe(NAMESPACE);
    expect(byName(manifests, "Namespace", NAMESPACE)).toBeDefined();
    for (const m of manifests.filter((m) => m.kind !== "Namespace"))
      expect({ doc: id(m), namespace: m.metadata.namespace }).toEqual({ doc: id(m), namespace: NAMESPACE });
  });

  it("are valid against the Kubernetes schemas", () => {
    const errors: string[] = [];
    for (const m of manifests) {
      const known = MODELS[`${m.apiVersion}/${m.kind}`];
      if (!known) {
        errors.push(`${id(m)}: no schema for ${m.apiVersion} ${m.kind}`);
        continue;
      }
      try {
        new known.model(withoutFile(m)).validate();
      } catch (err) {
        errors.push(`${id(m)}: ${err instanceof Error ? err.message : String(err)}`);
      }
    }
    expect(errors).toEqual([]);
  });

  it("use no field the Kubernetes API does not define", () => {
    expect(unknownFieldErrors(manifests)).toEqual([]);
  });

  it("build with kustomize when kubectl is installed", () => {
    if (!onPath("kubectl")) return; // nothing to run it with here: the checks above stand
    const built = spawnSync("kubectl", ["kustomize", kubeDir], { encoding: "utf8", timeout: 60_000 });
    expect({ status: built.status, stderr: built.stderr }).toEqual({ status: 0, stderr: "" });
    const names = (docs: { kind: string; metadata: { name: string } }[]) =>
      docs.map((d) => `${d.kind}/${d.metadata.name}`).sort();
    expect(names(parseAllDocuments(built.stdout).map((d) => d.toJS()))).toEqual(names(manifests));
  });

  it("run every role as `x ROLE` with flags and environment variables that role reads", () => {
    const errors: string[] = [];
    for (const w of workloads(manifests)) {
      for (const c of w.spec!.template!.spec.containers) {
        const where = `${id(w)} container ${c.name}`;
        expect({ where, image: c.image, command: c.command }).toEqual({
          where,
          image: "x-sandbox:latest",
          command: ["x"],
        });
        const [role = "", ...args] = c.args ?? [];
        const env = (c.env ?? []).map((e) => e.name);
        errors.push(...roleErrors(roles, role, args, env).map((e) => `${where}: ${e}`));
        // Kubernetes leaves $(VAR) as it is when the container defines no VAR
        for (const arg of args)
          for (const [, name] of arg.matchAll(/\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g))
            if (!env.includes(name!)) errors.push(`${where}: ${arg} names no variable of the container`);
      }
    }
    expect(errors).toEqual([]);
  });

  it("take every secret and setting from keys the Secret and ConfigMap define", () => {
    const secret = byName(manifests, "Secret", "x-cluster");
    const secretKeys = Object.keys({ ...secret.data, ...secret.stringData }).sort();
    expect(secretKeys).toEqual(["cluster-secret", "database-url"]);
    // placeholders, clearly marked, never a real credential
    for (const value of Object.values(secret.stringData ?? {})) expect(value).toMatch(/REPLACE/);
    expect(byName(manifests, "ConfigMap", "x-config").data?.domain).toBeTruthy();

    const errors: string[] = [];
    for (const w of workloads(manifests))
      for (const c of w.spec!.template!.spec.containers)
        for (const e of c.env ?? []) {
          const ref = e.valueFrom?.secretKeyRef ?? e.valueFrom?.configMapKeyRef;
          if (!ref) continue;
          const kind = e.valueFrom?.secretKeyRef ? "Secret" : "ConfigMap";
          const source = manifests.find((m) => m.kind === kind && m.metadata.name === ref.name);
          const keys = Object.keys({ ...source?.data, ...source?.stringData });
          if (!keys.includes(ref.key) && !ref.optional)
            errors.push(`${id(w)}: ${e.name} reads key ${ref.key} that ${kind} ${ref.name} does not define`);
          if (kind === "Secret" && ref.optional)
            errors.push(`${id(w)}: ${e.name}: a secret is never optional`);
        }
    expect(errors).toEqual([]);
  });

  it("run the nodes as a privileged DaemonSet on the host's network with the data on the host", () => {
    const ds = byName(manifests, "DaemonSet", "x-node");
    const pod = ds.spec!.template!.spec;
    const c = one(pod.containers, "node container");
    expect(c.args?.[0]).toBe("node");
    expect(c.securityContext?.privileged).toBe(true);
    expect(pod.hostNetwork).toBe(true);
    // sandboxes outlive the node's Pod: their processes are not in a PID namespace that ends with it
    expect(pod.hostPID).toBe(true);

    const hostPathOf = (mountPath: string) => {
      const mount = c.volumeMounts?.find((m) => m.mountPath === mountPath);
      const volume = pod.volumes?.find((v) => v.name === mount?.name);
      return { mountPath, hostPath: volume?.hostPath?.path, mount };
    };
    expect(hostPathOf("/var/lib/x")).toMatchObject({ hostPath: "/var/lib/x" });
    expect(hostPathOf("/run/netns")).toMatchObject({
      hostPath: "/run/netns",
      mount: { mountPropagation: "Bidirectional" },
    });
    expect(hostPathOf("/sys/fs/cgroup")).toMatchObject({ hostPath: "/sys/fs/cgroup" });
    expect(hostPathOf("/lib/modules")).toMatchObject({ hostPath: "/lib/modules", mount: { readOnly: true } });
    // the data dir the node is told is the one on the host
    expect(flagValue(c.args!, "data-dir") ?? "/var/lib/x").toBe("/var/lib/x");

    // name from the Kubernetes node, address from the Pod's IP (the host's, with hostNetwork)
    const env = Object.fromEntries((c.env ?? []).map((e) => [e.name, e]));
    expect(env.X_NODE_NAME?.valueFrom?.fieldRef?.fieldPath).toBe("spec.nodeName");
    expect(env.X_ADVERTISE?.valueFrom?.fieldRef?.fieldPath).toBe("status.podIP");
    expect(flagValue(c.args!, "name")).toBe("$(X_NODE_NAME)");
    expect(flagValue(c.args!, "advertise")).toBe("$(X_ADVERTISE)");

    // ready when its node API answers /health
    const apiPort = Number(flagValue(c.args!, "port") ?? 3000);
    expect(c.readinessProbe?.httpGet).toMatchObject({ path: "/health", port: apiPort });
    expect(c.ports?.map((p) => p.containerPort)).toContain(apiPort);

    // a restart is not a drain (it would outlive the restart); time to wind the warm pool down
    expect(c.lifecycle?.preStop).toBeUndefined();
    expect(pod.terminationGracePeriodSeconds).toBeGreaterThanOrEqual(60);
  });

  it("run api and proxy as Deployments of two behind Services and disruption budgets", () => {
    for (const [role, port] of [
      ["api", 3000],
      ["proxy", 3002],
    ] as const) {
      const name = `x-${role}`;
      const deployment = byName(manifests, "Deployment", name);
      const pod = deployment.spec!.template!;
      const c = one(pod.spec.containers, `${name} container`);
      expect({ name, role: c.args?.[0], replicas: deployment.spec?.replicas }).toEqual({
        name,
        role,
        replicas: 2,
      });
      expect(Number(flagValue(c.args!, "port"))).toBe(port);

      const service = byName(manifests, "Service", name);
      const selected = workloads(manifests).filter((w) =>
        matches(service.spec!.selector as Record<string, string>, w.spec!.template!.metadata?.labels),
      );
      expect(selected.map((w) => w.metadata.name)).toEqual([name]);
      const servicePort = one(service.spec!.ports!, `${name} service port`);
      expect(servicePort.port).toBe(port);
      const target = servicePort.targetPort ?? servicePort.port;
      expect(c.ports?.find((p) => p.name === target || p.containerPort === target)?.containerPort).toBe(port);

      const pdb = byName(manifests, "PodDisruptionBudget", name);
      expect(
        workloads(manifests)
          .filter((w) => matches(pdb.spec!.selector!.matchLabels!, w.spec!.template!.metadata?.labels))
          .map((w) => w.metadata.name),
      ).toEqual([name]);
      expect(pdb.spec!.minAvailable).toBeLessThan(deployment.spec!.replicas!);
    }
  });
});

describe("deploy/systemd", () => {
  const units = ["x-node", "x-api", "x-proxy"];
  const unitText = (name: string) => readFileSync(path.join(systemdDir, `${name}.service`), "utf8");
  const envFile = parseIni(readFileSync(path.join(systemdDir, "x.env"), "utf8"))[""]!;

  it("run `node /opt/x/packages/cli/bin/x.mjs ROLE` with flags and settings the role reads", () => {
    const errors: string[] = [];
    for (const name of units) {
      const unit = parseIni(unitText(name));
      const service = unit.Service!;
      expect({ name, envFile: service.EnvironmentFile }).toEqual({ name, envFile: ["/etc/x/x.env"] });
      expect({ name, restart: service.Restart }).toEqual({ name, restart: ["always"] });
      expect(unit.Unit?.After?.join(" ")).toContain("network-online.target");
      expect(unit.Unit?.Wants?.join(" ")).toContain("network-online.target");
      expect(unit.Install?.WantedBy).toEqual(["multi-user.target"]);

      const [binary, script, role = "", ...args] = one(service.ExecStart!, `${name} ExecStart`).split(/\s+/);
      expect({ name, binary, script, role }).toEqual({
        name,
        binary: "/usr/bin/node",
        script: "/opt/x/packages/cli/bin/x.mjs",
        role: name.slice(2),
      });
      errors.push(...roleErrors(roles, role, args, Object.keys(envFile), true).map((e) => `${name}: ${e}`));
      for (const arg of args)
        for (const [, variable] of arg.matchAll(/\$\{([A-Za-z_][A-Za-z0-9_]*)\}/g))
          if (!(variable! in envFile)) errors.push(`${name}: ${arg} names no variable of x.env`);
    }
    expect(errors).toEqual([]);
  });

  it("keep the sandboxes running when the node process restarts", () => {
    const service = parseIni(unitText("x-node")).Service!;
    expect(service.KillMode).toEqual(["process"]);
    expect(service.Restart).toEqual(["always"]);
  });

  it("mark the secrets of x.env as placeholders to replace", () => {
    expect(envFile.X_DATABASE_URL?.[0]).toMatch(/^postgres:\/\/.*REPLACE/);
    expect(envFile.X_CLUSTER_SECRET?.[0]).toMatch(/REPLACE/);
  });

  it("pass systemd-analyze verify where systemd is installed", () => {
    if (!onPath("systemd-analyze")) return; // not on this machine: the checks above stand
    const dir = mkdtempSync(path.join(os.tmpdir(), "x-deploy-units-"));
    try {
      for (const name of units) {
        let text = unitText(name);
        // verify wants the command to exist: the Node running this test stands in for /usr/bin/node
        if (!existsSync("/usr/bin/node")) text = text.replaceAll("/usr/bin/node ", `${process.execPath} `);
        writeFileSync(path.join(dir, `${name}.service`), text);
      }
      const run = spawnSync(
        "systemd-analyze",
        ["verify", "--man=no", ...units.map((n) => path.join(dir, `${n}.service`))],
        { encoding: "utf8", timeout: 60_000 },
      );
      // what it says of other units on this machine is none of ours
      const ours = `${run.stdout}${run.stderr}`
        .split("\n")
        .filter((line) => units.some((n) => line.includes(`${n}.service`)));
      expect({ status: run.status, ours }).toEqual({ status: 0, ours: [] });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
