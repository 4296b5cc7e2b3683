/**
 * A cluster of the real roles on this one machine, for the end-to-end test of "beyond one
 * machine": a PostgreSQL catalog of its own (ScratchPostgres), `x node` processes on loopback
 * addresses of their own (127.0.1.N), each with its own data dir, network prefix and address
 * range, and any number of `x api` and `x proxy` processes on 127.0.0.1. Every process is a
 * child of the test, started, killed (by pid) and started again like `x serve` in x-serve.ts;
 * cleanup removes whatever they left, whatever state a failed test left them in.
 *
 * Names follow the global set-up's sweep: data dirs start with X_SERVE_DATA_PREFIX, network
 * prefixes are of kind "r", the catalog is a scratch PostgreSQL, so a killed run's leftovers
 * go with the next run's sweep.
 */
import { type ChildProcess, execFile, execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { ensureBaseImage } from "../../src/rootfs/base-image.js";
import { TEST_DATA_DIR } from "./platform.js";
import { ScratchPostgres } from "./scratch-postgres.js";
import { testNetwork } from "./test-networks.js";
import { exited, hostLeftovers, type Leftovers, removeLeftovers, X_SERVE_DATA_PREFIX } from "./x-serve.js";

const X_BIN = path.resolve(__dirname, "../../../cli/bin/x.mjs");

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A TCP port nothing listens on now, on `host` (any loopback address works on Linux). */
export function freePortOn(host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, host, () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/**
 * Polls `probe` until `done` says its value will do or `timeoutMs` passes; returns the last
 * value, so the caller's expect shows what was seen. A probe that throws counts as not done.
 */
export async function waitFor<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs: number,
  everyMs = 250,
): Promise<T | Error> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    let value: T | Error;
    try {
      value = await probe();
    } catch (err) {
      value = err instanceof Error ? err : new Error(String(err));
    }
    if (!(value instanceof Error) && done(value)) return value;
    if (Date.now() >= deadline) return value;
    await sleep(everyMs);
  }
}

/** One `x` process of the cluster (node, api or proxy): spawned, its output kept, killed by pid. */
export class XProcess {
  child: ChildProcess | undefined;
  /** Everything the process wrote (stdout and stderr), since its last start. */
  output = "";
  /** Output of earlier runs (before a restart). */
  earlier = "";
  private closed = false;

  constructor(
    readonly label: string,
    private readonly args: () => string[],
    private readonly readyLine: RegExp,
  ) {}

  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Whether it has ended (by itself or killed), or never started. */
  get ended(): boolean {
    return !this.child || this.child.exitCode !== null || this.child.signalCode !== null;
  }

  /** Starts the process (with `env` added to the test's) and resolves with the ready line's match once it is out. */
  async start(timeoutMs: number, env: Record<string, string> = {}): Promise<RegExpExecArray> {
    if (this.closed) throw new Error(`${this.label}: the cluster is being removed`);
    if (!this.ended) throw new Error(`${this.label} is running already (pid ${this.pid})`);
    this.earlier += this.output;
    this.output = "";
    const proc = spawn(process.execPath, [X_BIN, ...this.args()], {
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, X_LOG_FORMAT: "json", ...env },
    });
    this.child = proc;
    proc.stdout!.on("data", (d) => {
      this.output += d;
    });
    proc.stderr!.on("data", (d) => {
      this.output += d;
    });
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const ready = this.readyLine.exec(this.output);
      if (ready) return ready;
      if (this.closed) {
        await this.kill();
        throw new Error(`${this.label}: the cluster is being removed`);
      }
      if (this.ended)
        throw new Error(`${this.label} exited (${proc.exitCode ?? proc.signalCode}):\n${this.tail()}`);
      if (Date.now() > deadline)
        throw new Error(`${this.label} not ready in ${timeoutMs} ms:\n${this.tail()}`);
      await sleep(100);
    }
  }

  /** Kills it (SIGKILL unless told) by its pid and waits until it is gone. */
  async kill(signal: NodeJS.Signals = "SIGKILL"): Promise<void> {
    const child = this.child;
    if (!child || this.ended) return;
    child.kill(signal);
    await exited(child);
  }

  /** For cleanup: no start from now on, and the running process killed. */
  async close(): Promise<void> {
    this.closed = true;
    await this.kill();
  }

  /** The end of its output, for failure messages. */
  tail(chars = 6000): string {
    return `--- ${this.label} (pid ${this.pid ?? "-"}) ---\n${this.output.slice(-chars)}`;
  }

  /** Its log lines (JSON) at warn or worse, since its last start. */
  warnings(): string[] {
    return this.output.split("\n").filter((l) => /"level":(40|50|60)\b|"level":"(warn|error|fatal)"/.test(l));
  }
}

export interface NodeOptions {
  name: string;
  host: string;
  /**
   * `fixed`: free ports chosen once and passed on every start (a restart comes back on them);
   * `zero`: `--port 0 --proxy-port 0`, the node picks and advertises what it bound.
   */
  ports: "fixed" | "zero";
  /** Flags after those the cluster sets (e.g. --runtime, --pool-size). */
  extra: string[];
}

/** One `x node`: a data dir, network names and range, and ports of its own, kept across restarts. */
export class XNode extends XProcess {
  readonly dataDir = mkdtempSync(X_SERVE_DATA_PREFIX);
  readonly prefix: string;
  readonly cidr: string;
  readonly name: string;
  readonly host: string;
  readonly ports: "fixed" | "zero";
  /** The ports it listens on (from its ready line when it picks them). */
  apiPort = 0;
  proxyPort = 0;

  constructor(
    cluster: { databaseUrl: () => string; secret: string; domain: string; secretsKeyFile: string },
    o: NodeOptions,
  ) {
    const network = testNetwork("r");
    super(
      o.name,
      () => [
        "node",
        "--name",
        o.name,
        "--host",
        o.host,
        "--port",
        o.ports === "fixed" ? String(this.apiPort) : "0",
        "--proxy-port",
        o.ports === "fixed" ? String(this.proxyPort) : "0",
        "--data-dir",
        this.dataDir,
        "--network-prefix",
        network.prefix,
        "--network-cidr",
        network.cidr,
        "--cluster-secret",
        cluster.secret,
        "--database-url",
        cluster.databaseUrl(),
        "--domain",
        cluster.domain,
        "--secrets-key-file",
        cluster.secretsKeyFile,
        ...o.extra,
      ],
      new RegExp(`x: node ${o.name} ready — API on (\\S+):(\\d+), sandbox traffic on (\\S+):(\\d+)`),
    );
    this.name = o.name;
    this.host = o.host;
    this.ports = o.ports;
    this.prefix = network.prefix;
    this.cidr = network.cidr;
  }

  get apiUrl(): string {
    return `http://${this.host}:${this.apiPort}`;
  }

  get trafficUrl(): string {
    return `http://${this.host}:${this.proxyPort}`;
  }

  /** Starts (or starts again, with the same flags and data) and checks what it says it listens on. */
  override async start(timeoutMs: number, env: Record<string, string> = {}): Promise<RegExpExecArray> {
    if (this.ports === "fixed") {
      // chosen once: a restart uses the same flags
      if (!this.apiPort) this.apiPort = await freePortOn(this.host);
      if (!this.proxyPort) this.proxyPort = await freePortOn(this.host);
    }
    const ready = await super.start(timeoutMs, env);
    if (this.ports === "zero") {
      this.apiPort = Number(ready[2]);
      this.proxyPort = Number(ready[4]);
    }
    const said = `${ready[1]}:${ready[2]} ${ready[3]}:${ready[4]}`;
    const meant = `${this.host}:${this.apiPort} ${this.host}:${this.proxyPort}`;
    if (said !== meant || !this.apiPort || !this.proxyPort)
      throw new Error(`${this.name} says it listens on ${said}, not ${meant}`);
    return ready;
  }

  /** Seeds the data dir with a hard-linked copy of the test's cached base image. */
  async seedBaseImage(): Promise<string> {
    const image = await ensureBaseImage({ dataDir: TEST_DATA_DIR });
    if (image.built) throw new Error("the base image was built now: the global set-up should have made it");
    const imageDir = path.dirname(image.rootfs);
    mkdirSync(path.join(this.dataDir, "images"), { recursive: true });
    execFileSync("cp", ["-al", imageDir, path.join(this.dataDir, "images", path.basename(imageDir))]);
    return path.relative(TEST_DATA_DIR, image.rootfs);
  }
}

/** `x api` or `x proxy` on 127.0.0.1, on a port it picks (`--port 0`), read from its ready line. */
export class XRole extends XProcess {
  port = 0;

  constructor(role: "api" | "proxy", label: string, args: () => string[]) {
    super(
      label,
      () => [role, "--host", "127.0.0.1", "--port", "0", ...args()],
      new RegExp(`x: ${role} ready on 127\\.0\\.0\\.1:(\\d+)`),
    );
  }

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  override async start(timeoutMs: number): Promise<RegExpExecArray> {
    const ready = await super.start(timeoutMs);
    this.port = Number(ready[1]);
    return ready;
  }
}

export interface ClusterOptions {
  nodes: number;
  apis: number;
  proxies: number;
  /** Flags every node gets besides the cluster's own. */
  nodeFlags: string[];
  /** How each node gets its ports (see NodeOptions), by index; `fixed` when not given. */
  nodePorts?: Array<"fixed" | "zero">;
  /** Flags every api gets (e.g. --node-timeout). */
  apiFlags?: string[];
  domain?: string;
}

/** Connection options of the public e2b client for one api and one proxy of the cluster. */
export interface ClientOptions {
  apiUrl: string;
  sandboxUrl: string;
  apiKey: string;
}

export class XCluster {
  readonly postgres = new ScratchPostgres();
  readonly secret = randomBytes(16).toString("hex");
  /** The secrets key every node and proxy is given (tokens in the catalog are sealed with it). */
  private readonly keyDir = mkdtempSync(path.join(os.tmpdir(), "x-cluster-key-"));
  readonly secretsKeyFile = path.join(this.keyDir, "secrets.key");
  readonly domain: string;
  readonly nodes: XNode[];
  readonly apis: XRole[];
  readonly proxies: XRole[];
  apiKey = "";
  /** The base image's layer path (relative to a data dir), as node 1 was seeded with. */
  baseLayer = "";
  private catalog: pg.Pool | undefined;

  constructor(o: ClusterOptions) {
    this.domain = o.domain ?? "sandbox.localhost";
    writeFileSync(this.secretsKeyFile, randomBytes(32), { mode: 0o600 });
    const cluster = {
      databaseUrl: () => this.postgres.url,
      secret: this.secret,
      domain: this.domain,
      secretsKeyFile: this.secretsKeyFile,
    };
    this.nodes = Array.from(
      { length: o.nodes },
      (_, i) =>
        new XNode(cluster, {
          name: `n${i + 1}`,
          host: `127.0.1.${i + 1}`,
          ports: o.nodePorts?.[i] ?? "fixed",
          extra: o.nodeFlags,
        }),
    );
    this.apis = Array.from(
      { length: o.apis },
      (_, i) =>
        new XRole("api", `api ${String.fromCharCode(65 + i)}`, () => [
          "--database-url",
          this.postgres.url,
          ...(o.apiFlags ?? []),
        ]),
    );
    this.proxies = Array.from(
      { length: o.proxies },
      (_, i) =>
        new XRole("proxy", `proxy ${String.fromCharCode(65 + i)}`, () => [
          "--database-url",
          this.postgres.url,
          "--domain",
          this.domain,
          "--secrets-key-file",
          this.secretsKeyFile,
        ]),
    );
  }

  get processes(): XProcess[] {
    return [...this.nodes, ...this.apis, ...this.proxies];
  }

  node(name: string): XNode {
    const found = this.nodes.find((n) => n.name === name);
    if (!found) throw new Error(`no node ${name}`);
    return found;
  }

  /** The e2b client's options for api `a` and proxy `p` (indexes). */
  client(a: number, p: number): ClientOptions {
    return { apiUrl: this.apis[a]!.url, sandboxUrl: this.proxies[p]!.url, apiKey: this.apiKey };
  }

  /**
   * The catalog, then node 1 on a seeded copy of the base image, then the other nodes (which
   * copy the base image from node 1), the apis and proxies, and an API key.
   */
  async start(): Promise<void> {
    await this.postgres.init();
    const [first, ...others] = this.nodes;
    this.baseLayer = await first!.seedBaseImage();
    await first!.start(90_000);
    // the others fetch ~500 MB of base image from node 1 before they are ready
    await Promise.all([
      ...others.map((n) => n.start(240_000)),
      ...this.apis.map((a) => a.start(30_000)),
      ...this.proxies.map((p) => p.start(30_000)),
    ]);
    const created = JSON.parse(await this.x(["keys", "create", "cluster-e2e", "--json"])) as { key: string };
    this.apiKey = created.key;
  }

  /** Runs an `x` command against the cluster's catalog; resolves with its stdout, rejects with its output. */
  x(args: string[]): Promise<string> {
    return new Promise((resolve, reject) => {
      execFile(
        process.execPath,
        [X_BIN, ...args, "--database-url", this.postgres.url],
        { encoding: "utf8", timeout: 30_000 },
        (err, stdout, stderr) => {
          if (err) reject(new Error(`x ${args.join(" ")}: ${err.message}\n${stdout}${stderr}`));
          else resolve(stdout);
        },
      );
    });
  }

  /** `x node list --json`. */
  async listNodes(): Promise<Array<{ id: string; state: string; apiUrl: string; trafficUrl: string }>> {
    return JSON.parse(await this.x(["node", "list", "--json"]));
  }

  async drain(name: string): Promise<void> {
    await this.x(["node", "drain", name]);
  }

  async undrain(name: string): Promise<void> {
    await this.x(["node", "undrain", name]);
  }

  /** Drains every node but `name`, and undrains `name`: creates go there. */
  async only(name: string): Promise<void> {
    await this.undrain(name);
    for (const n of this.nodes) if (n.name !== name && !n.ended) await this.drain(n.name);
  }

  /** Every node that is up takes sandboxes again. */
  async undrainAll(): Promise<void> {
    for (const n of this.nodes) if (!n.ended) await this.undrain(n.name);
  }

  /** A query on the catalog, straight (the test's own look at where things are). */
  async query<R extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<R[]> {
    this.catalog ??= new pg.Pool({ connectionString: this.postgres.url, max: 2 });
    return (await this.catalog.query<R>(text, values)).rows;
  }

  /** The node a sandbox is on, from the catalog. */
  async nodeOf(sandboxId: string): Promise<string | undefined> {
    const [row] = await this.query<{ node_id: string }>("select node_id from sandboxes where id = $1", [
      sandboxId,
    ]);
    return row?.node_id;
  }

  /** The ends of every process's output, for failure messages. */
  logs(chars = 4000): string {
    return this.processes.map((p) => p.tail(chars)).join("\n");
  }

  /** Writes every process's whole output (earlier runs too) into `dir`. */
  saveLogs(dir: string): void {
    mkdirSync(dir, { recursive: true });
    for (const p of this.processes)
      writeFileSync(path.join(dir, `${p.label.replace(/\W+/g, "-")}.log`), p.earlier + p.output);
  }

  get prefixes(): RegExp {
    return new RegExp(`^(${this.nodes.map((n) => n.prefix).join("|")})$`);
  }

  /** What the host holds of the cluster's nodes (see hostLeftovers). */
  leftovers(): Leftovers {
    return hostLeftovers(
      this.nodes.map((n) => n.dataDir),
      this.prefixes,
    );
  }

  /**
   * Removes everything, whatever happened: every process killed by its pid, what the nodes
   * left on the host (sandboxes, network namespaces, links, firewall tables, mounts), the
   * catalog's PostgreSQL and the data dirs.
   */
  async cleanup(opts: { keepLogs?: boolean } = {}): Promise<void> {
    // kept when asked (X_CLUSTER_LOG_DIR) or when something failed, before anything is killed
    const logDir =
      process.env.X_CLUSTER_LOG_DIR ??
      (opts.keepLogs ? mkdtempSync(path.join(os.tmpdir(), "x-cluster-logs-")) : "");
    if (logDir) {
      this.saveLogs(logDir);
      process.stderr.write(`x-cluster: the processes' logs are in ${logDir}\n`);
    }
    await Promise.all(this.processes.map((p) => p.close().catch(() => undefined)));
    await this.catalog?.end().catch(() => undefined);
    const dataDirs = this.nodes.map((n) => n.dataDir);
    await removeLeftovers(dataDirs, this.prefixes);
    this.postgres.remove();
    for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
    rmSync(this.keyDir, { recursive: true, force: true });
  }
}
