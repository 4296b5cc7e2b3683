/**
 * The real `x serve` as a child process on a data dir, network prefix and address range of its
 * own, for tests that kill it and start it again (restart, failure drills): start, SIGKILL,
 * the API, what the host holds of it, and a cleanup that removes all of that whatever happened.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { createRuntime } from "../../src/runtime/create-runtime.js";
import { setFrozen } from "../../src/runtime/freezer.js";
import { containerCgroup } from "../../src/runtime/oci-spec.js";
import { RUNC_VIEWS_DIR, RuncViews } from "../../src/runtime/runc-userns.js";
import { checkDeclared } from "./declared-statuses.js";
import { freePort } from "./free-port.js";
import { TEST_DATA_DIR } from "./platform.js";
import { testNetwork } from "./test-networks.js";

/** The `x` command, as an operator runs it. */
export const X_BIN = path.resolve(__dirname, "../../../cli/bin/x.mjs");
/** The repository, where `pnpm x` runs it. */
const REPO_ROOT = path.resolve(__dirname, "../../../..");
/** Where each `x serve` under test keeps its data (swept before a run: see sweepTestLeftovers). */
export const X_SERVE_DATA_PREFIX = "/var/tmp/x-serve-test-";
export const RUNTIMES = ["runc", "runsc"] as const;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Runs a host command; its failure fails the caller (a check that cannot look must not pass). */
export function sh(cmd: string, args: string[]): string {
  return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
}

/** The same for cleanup, where one failure must not stop the rest: reported, not thrown. */
function tryHard(what: string, fn: () => unknown): void {
  try {
    fn();
  } catch (err) {
    process.stderr.write(`cleanup: ${what}: ${err}\n`);
  }
}

export function exited(proc: ChildProcess): Promise<void> {
  if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => proc.once("exit", () => resolve()));
}

export interface Leftovers {
  netns: string[];
  links: string[];
  mounts: string[];
  containers: Record<(typeof RUNTIMES)[number], string[]>;
  table: string[];
  processes: string[];
  /** Loop devices backed by a file under the data dir (sandbox disks, volumes). */
  loops: string[];
}

/** What `leftovers()` shows of a platform that left nothing. */
export const NOTHING_LEFT: Leftovers = {
  netns: [],
  links: [],
  mounts: [],
  containers: { runc: [], runsc: [] },
  table: [],
  processes: [],
  loops: [],
};

export class XServe {
  readonly dataDir = mkdtempSync(`${X_SERVE_DATA_PREFIX}`);
  /** The secrets key, kept apart from the data directory as the README recommends. */
  readonly secretsKeyFile = `${this.dataDir}.secrets.key`;
  readonly prefix: string;
  readonly cidr: string;
  apiPort = 0;
  proxyPort = 0;
  apiKey = "";
  child: ChildProcess | undefined;
  output = "";

  constructor(
    private readonly args: string[] = [],
    /**
     * How it is started: `node x.mjs serve …` (what an operator's unit runs), or `pnpm x serve
     * …` from the repository (the README's first command), in a process group of its own as a
     * terminal's foreground job is, so that a signal to the group is a Ctrl-C.
     */
    private readonly launch: "node" | "pnpm" = "node",
  ) {
    ({ prefix: this.prefix, cidr: this.cidr } = testNetwork("r"));
    // the cached base image, hard-linked so nothing is rebuilt
    mkdirSync(path.join(this.dataDir, "images"));
    execFileSync("cp", ["-al", `${path.join(TEST_DATA_DIR, "images")}/.`, path.join(this.dataDir, "images")]);
    writeFileSync(this.secretsKeyFile, randomBytes(32), { mode: 0o600 });
  }

  get apiUrl(): string {
    return `http://127.0.0.1:${this.apiPort}`;
  }

  get proxyUrl(): string {
    return `http://127.0.0.1:${this.proxyPort}`;
  }

  /** Starts `x serve` (its output gathered in `output`) without waiting for anything. */
  async spawn(env: Record<string, string> = {}, extraArgs: string[] = []): Promise<ChildProcess> {
    if (!this.apiPort) this.apiPort = await freePort();
    if (!this.proxyPort) this.proxyPort = await freePort();
    this.output = "";
    const pnpm = this.launch === "pnpm";
    const proc = spawn(
      pnpm ? "pnpm" : process.execPath,
      [
        ...(pnpm ? ["x"] : [X_BIN]),
        "serve",
        "--data-dir",
        this.dataDir,
        "--host",
        "127.0.0.1",
        "--port",
        String(this.apiPort),
        "--proxy-port",
        String(this.proxyPort),
        "--network-prefix",
        this.prefix,
        "--network-cidr",
        this.cidr,
        "--secrets-key-file",
        this.secretsKeyFile,
        ...(extraArgs.includes("--tls-port") ? [] : ["--tls-port", "0"]),
        ...this.args,
        ...extraArgs,
      ],
      {
        stdio: ["ignore", "pipe", "pipe"],
        env: { ...process.env, ...env },
        ...(pnpm ? { cwd: REPO_ROOT, detached: true } : {}),
      },
    );
    this.child = proc;
    proc.stdout!.on("data", (d) => {
      this.output += d;
    });
    proc.stderr!.on("data", (d) => {
      this.output += d;
    });
    return proc;
  }

  /** Starts `x serve` and resolves once its ready line (and the key line on first start) is out. */
  async start(env: Record<string, string> = {}): Promise<void> {
    const proc = await this.spawn(env);
    // a base image rebuild here would mean the cached one was not reused: fail fast
    const deadline = Date.now() + 60_000;
    while (!/x: point the e2b client/.test(this.output)) {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`x serve exited (${proc.exitCode ?? proc.signalCode}):\n${this.output}`);
      if (Date.now() > deadline) throw new Error(`x serve not ready in 60 s:\n${this.output.slice(0, 4000)}`);
      await sleep(50);
    }
    const key = /first team API key \(shown once, keep it\): (\S+)/.exec(this.output)?.[1];
    if (key) this.apiKey = key;
  }

  /** Whether the process has ended (by itself, by a crash point, or killed). */
  get ended(): boolean {
    return !this.child || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child;
    if (!child || this.ended) return;
    this.signal(signal);
    await exited(child);
  }

  /** Sends a signal to x serve, or under pnpm to its whole process group (a Ctrl-C, for SIGINT). */
  signal(signal: NodeJS.Signals): void {
    const child = this.child;
    if (!child?.pid || this.ended) return;
    if (this.launch === "pnpm") process.kill(-child.pid, signal);
    else child.kill(signal);
  }

  async api(method: string, p: string, body?: unknown): Promise<{ status: number; body: any }> {
    const res = await fetch(`${this.apiUrl}${p}`, {
      method,
      headers: { "X-API-Key": this.apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    checkDeclared(method, p, res.status);
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  /** What the host holds that carries this platform's names or lives under its data dir. */
  leftovers(): Leftovers {
    return hostLeftovers([this.dataDir], new RegExp(`^${this.prefix}$`));
  }

  /** Waits while an `x cleanup` the guardian started after a kill (see lib/guardian.ts) runs. */
  async cleanupDone(): Promise<void> {
    const file = path.join(this.dataDir, "run", this.prefix, "cleanup.pid");
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
      if (!existsSync(file)) return;
      const { pid } = JSON.parse(readFileSync(file, "utf8") || "{}") as { pid?: number };
      if (!pid || !existsSync(`/proc/${pid}`)) return;
    }
  }

  /** Removes whatever this platform left, whatever state a failed test left it in. */
  async cleanup(): Promise<void> {
    // a clean stop first: a killed one has its guardian start `x cleanup` on this data dir
    const child = this.child;
    if (child && !this.ended) {
      this.signal("SIGTERM");
      await Promise.race([exited(child), sleep(30_000)]);
    }
    await this.kill();
    // under pnpm, what its group still holds (x serve itself, when pnpm went first)
    if (this.launch === "pnpm" && child?.pid) {
      try {
        process.kill(-child.pid, "SIGKILL");
      } catch {
        // the group is gone
      }
    }
    await this.cleanupDone();
    await removeLeftovers([this.dataDir], new RegExp(`^${this.prefix}$`));
    rmSync(this.dataDir, { recursive: true, force: true });
    rmSync(this.secretsKeyFile, { force: true });
  }
}

/**
 * What the host holds of platforms whose network prefix matches `prefix` or whose data lives
 * in `dataDirs`: network namespaces, host links, the firewall table, mounts, containers and
 * the processes of containers.
 */
export function hostLeftovers(dataDirs: string[], prefix: RegExp): Leftovers {
  const ours = (name: string, sep: string) => {
    const at = name.indexOf(sep);
    return at > 0 && prefix.test(name.slice(0, at));
  };
  const netns = sh("ip", ["netns", "list"])
    .split("\n")
    .filter((l) => ours(l, "-"));
  const links = sh("ip", ["-o", "link", "show"])
    .split("\n")
    .filter((l) => {
      const name = /^\d+: ([^:@]+)/.exec(l)?.[1];
      return name !== undefined && /h\d+$/.test(name) && prefix.test(name.replace(/h\d+$/, ""));
    });
  const under = (p: string | undefined) => p !== undefined && dataDirs.some((d) => p.startsWith(`${d}/`));
  // runc sandboxes' views of their files are mounted outside the data dir (runc-userns.ts)
  const views = (existsSync(RUNC_VIEWS_DIR) ? readdirSync(RUNC_VIEWS_DIR) : [])
    .map((slot) => path.join(RUNC_VIEWS_DIR, slot))
    .filter((lease) => {
      try {
        return under(readFileSync(path.join(lease, "owner"), "utf8"));
      } catch {
        return false;
      }
    });
  const mounts = readFileSync("/proc/mounts", "utf8")
    .split("\n")
    .filter((l) => {
      const point = l.split(" ")[1];
      return under(point) || views.some((v) => point?.startsWith(`${v}/`));
    });
  const containers = Object.fromEntries(
    RUNTIMES.map((r) => [
      r,
      dataDirs.flatMap((d) => {
        const root = path.join(d, "runtime", r, "root");
        return existsSync(root) ? sh(r, ["--root", root, "list", "--quiet"]).split("\n").filter(Boolean) : [];
      }),
    ]),
  ) as Leftovers["containers"];
  const table = sh("nft", ["list", "tables"])
    .split("\n")
    .filter((l) => {
      const m = /^table inet (\S+)_net$/.exec(l.trim());
      return m !== null && prefix.test(m[1]!);
    });
  // runsc sandbox and gofer processes, runc container inits carry the data dir on their command line
  const processes = readdirSync("/proc")
    .filter((pid) => /^\d+$/.test(pid) && Number(pid) !== process.pid)
    .filter((pid) => {
      try {
        return dataDirs.some((d) => readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`${d}/`));
      } catch {
        return false; // ended while we looked
      }
    });
  const loops = sh("losetup", ["--list", "--noheadings", "--output", "NAME,BACK-FILE"])
    .split("\n")
    .filter((l) => under(l.trim().split(/\s+/)[1]));
  return { netns, links, mounts, containers, table, processes, loops };
}

/** Removes all of hostLeftovers, whatever state a failed or killed run left it in. */
export async function removeLeftovers(dataDirs: string[], prefix: RegExp): Promise<void> {
  for (const dataDir of dataDirs) {
    for (const r of RUNTIMES) {
      const runtime = await createRuntime(r, { stateDir: path.join(dataDir, "runtime", r) }).catch(
        () => undefined,
      );
      for (const id of (await runtime?.list().catch(() => [])) ?? []) {
        // a sandbox frozen through its cgroup cannot be deleted (gVisor's sentry cannot answer)
        await setFrozen(containerCgroup({ id }), false).catch(() => false);
        const netns = (existsSync("/run/netns") ? readdirSync("/run/netns") : []).find((n) =>
          n.endsWith(`-${id}`),
        );
        await runtime
          ?.delete({ id, netnsPath: netns ? `/run/netns/${netns}` : "" })
          .catch((err) => process.stderr.write(`cleanup: ${r} delete ${id}: ${err}\n`));
      }
    }
  }
  await new RuncViews()
    .sweep((owner) => dataDirs.some((d) => owner.startsWith(`${d}/`)))
    .catch((err) => process.stderr.write(`cleanup: runc views: ${err}\n`));
  const left = hostLeftovers(dataDirs, prefix);
  for (const m of left.mounts.reverse()) tryHard(`umount ${m}`, () => sh("umount", ["-l", m.split(" ")[1]!]));
  for (const l of left.links) {
    tryHard(`link ${l}`, () => sh("ip", ["link", "delete", l.split(":")[1]!.trim().split("@")[0]!]));
  }
  for (const n of left.netns) tryHard(`netns ${n}`, () => sh("ip", ["netns", "delete", n.split(" ")[0]!]));
  for (const t of left.table) {
    tryHard(`nft ${t}`, () => sh("nft", ["delete", "table", "inet", t.trim().split(" ")[2]!]));
  }
  for (const l of left.loops) tryHard(`loop ${l}`, () => sh("losetup", ["-d", l.trim().split(/\s+/)[0]!]));
  for (const pid of left.processes) {
    try {
      process.kill(Number(pid), "SIGKILL");
    } catch {
      // gone already
    }
  }
}
