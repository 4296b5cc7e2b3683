import type { ChildProcess } from "node:child_process";
import { requireBinary } from "../../lib/command.js";
import { spawnOwned } from "../../lib/owned-process.js";

/**
 * A network namespace of its own for one pull, where skopeo runs and nothing but a relay to the
 * platform's PullProxy listens: skopeo's HTTP_PROXY/HTTPS_PROXY send every request there, and
 * what Go's proxy rules send straight out instead (loopback addresses and `localhost`, which Go
 * never proxies) meets this namespace's own empty loopback, not the host's. The relay listens on
 * the proxy port (bytes go to the unix socket as they come) and on the port of each loopback
 * registry the operator allowed (each connection is a CONNECT to that registry, through the
 * proxy, which checks it like any other). Unix sockets are reached by path across network
 * namespaces; the namespace goes when the relay does (with the pull, or with the platform).
 */

/** The relay, run by `node -e` inside the new namespace: argv = socket, ip, JSON of listeners. */
const RELAY = String.raw`
const net = require("node:net");
const { execFileSync } = require("node:child_process");
const [socket, ip, spec] = process.argv.slice(1);
execFileSync(ip, ["link", "set", "lo", "up"]);
const listeners = JSON.parse(spec);
const relay = (target) => (client) => {
  client.on("error", () => client.destroy());
  const up = net.connect(socket);
  up.on("error", () => { up.destroy(); client.destroy(); });
  up.on("close", () => client.destroy());
  client.on("close", () => up.destroy());
  if (!target) { client.pipe(up); up.pipe(client); return; }
  up.write("CONNECT " + target + " HTTP/1.1\r\nHost: " + target + "\r\n\r\n");
  let head = Buffer.alloc(0);
  const onData = (chunk) => {
    head = Buffer.concat([head, chunk]);
    const end = head.indexOf("\r\n\r\n");
    if (end < 0) { if (head.length > 8192) up.destroy(); return; }
    up.pause();
    up.off("data", onData);
    if (!/^HTTP\/1\.[01] 200 /.test(head.toString("latin1"))) { client.resetAndDestroy(); up.destroy(); return; }
    if (end + 4 < head.length) client.write(head.subarray(end + 4));
    client.pipe(up);
    up.pipe(client);
  };
  up.on("data", onData);
};
const listen = (server, port, host, opts) => new Promise((resolve, reject) => {
  server.once("error", reject);
  server.listen({ port, host, ...opts }, resolve);
});
(async () => {
  for (const l of listeners) {
    await listen(net.createServer(relay(l.target)), l.port, "0.0.0.0");
    await listen(net.createServer(relay(l.target)), l.port, "::", { ipv6Only: true }).catch(() => {});
  }
  process.stdout.write("ready\n");
})().catch((err) => { process.stderr.write(String(err) + "\n"); process.exit(1); });
process.stdin.on("end", () => process.exit(0));
process.stdin.on("close", () => process.exit(0));
process.stdin.resume();
`;

/** A loopback registry reached through the proxy: its port in the namespace and `host:port` to CONNECT to. */
export interface LoopbackForward {
  port: number;
  target: string;
}

export class PullNetwork {
  private constructor(
    private readonly relay: ChildProcess,
    /** The relay's proxy port in the namespace, for HTTP_PROXY and HTTPS_PROXY. */
    readonly proxyPort: number,
    /** `/proc/<relay>/ns/net`: what skopeo is started in (nsenter --net). */
    readonly netns: string,
  ) {}

  /** Starts the namespace and its relay to `socket`; resolves once it listens. */
  static async start(socket: string, forwards: readonly LoopbackForward[]): Promise<PullNetwork> {
    const unshare = await requireBinary("unshare", "apt-get install util-linux");
    const ip = await requireBinary("ip", "apt-get install iproute2");
    const taken = new Set(forwards.map((f) => f.port));
    let proxyPort = 3128;
    while (taken.has(proxyPort)) proxyPort++;
    // one listener a port: the first registry on it is what its connections are for
    const byPort = new Map<number, string>();
    for (const f of forwards) if (!byPort.has(f.port)) byPort.set(f.port, f.target);
    const listeners = [{ port: proxyPort }, ...[...byPort].map(([port, target]) => ({ port, target }))];
    const relay = spawnOwned(
      unshare,
      ["--net", "--", process.execPath, "-e", RELAY, socket, ip, JSON.stringify(listeners)],
      { stdio: ["pipe", "pipe", "pipe"] },
    );
    let stderr = "";
    relay.stderr!.on("data", (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    await new Promise<void>((resolve, reject) => {
      let out = "";
      relay.stdout!.on("data", (chunk: Buffer) => {
        out += chunk.toString();
        if (out.includes("ready\n")) resolve();
      });
      relay.once("error", reject);
      relay.once("exit", (code) =>
        reject(
          new Error(`the pull's network namespace did not start (${code}): ${stderr.trim().slice(-500)}`),
        ),
      );
    });
    // setpriv and unshare exec in place: the relay's pid is the namespace's holder
    return new PullNetwork(relay, proxyPort, `/proc/${relay.pid}/ns/net`);
  }

  /** skopeo's environment additions: every request through the relay, none past it. */
  proxyEnv(): Record<string, string> {
    const url = `http://127.0.0.1:${this.proxyPort}`;
    return {
      HTTP_PROXY: url,
      HTTPS_PROXY: url,
      http_proxy: url,
      https_proxy: url,
      NO_PROXY: "",
      no_proxy: "",
    };
  }

  async close(): Promise<void> {
    if (this.relay.exitCode !== null || this.relay.signalCode !== null) return;
    const exited = new Promise((resolve) => this.relay.once("exit", resolve));
    this.relay.kill("SIGTERM");
    await exited;
  }
}
