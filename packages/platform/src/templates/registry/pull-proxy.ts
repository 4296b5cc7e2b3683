import http from "node:http";
import net from "node:net";
import type { Duplex } from "node:stream";
import {
  type AddressClass,
  canonicalHost,
  type DestinationGuard,
  pinnedLookup,
  ResolveError,
} from "../../network/destination-guard.js";

/** A connection skopeo asked for and the proxy did not make, by policy or because it failed. */
export type ProxyOutcome =
  | { host: string; port: number; refused: AddressClass; literal: boolean }
  | { host: string; port: number; failed: string };

/** Socket error codes as Go (skopeo) words them, so that a failure reads the same either way. */
const FAILURE: Record<string, string> = {
  ECONNREFUSED: "connection refused",
  ECONNRESET: "connection reset by peer",
  ETIMEDOUT: "i/o timeout",
  EHOSTUNREACH: "no route to host",
  ENETUNREACH: "network is unreachable",
  ENOTFOUND: "no such host",
  EAI_AGAIN: "server misbehaving",
};
const failureOf = (err: unknown) => {
  const code = err instanceof ResolveError ? err.code : (err as NodeJS.ErrnoException).code;
  return FAILURE[code ?? ""] ?? "connection failed";
};

/** How long the proxy waits for a registry to take a connection. */
const CONNECT_TIMEOUT_MS = 30_000;

/** `host:port` of a CONNECT (`[v6]:port` too); undefined for anything else. */
function authority(target: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:[\]]+)):(\d{1,5})$/.exec(target);
  const port = Number(m?.[3]);
  if (!m || !(port >= 1 && port <= 65535)) return undefined;
  return { host: m[1] ?? m[2]!, port };
}

/**
 * The HTTP proxy every connection of one pull goes through (skopeo runs where nothing else is
 * reachable, see pull-netns.ts): the registry, its token realm, the hosts blobs are redirected
 * to. Each CONNECT (HTTPS) and each absolute-form request (plain HTTP, for registries the
 * operator allowed it with) is checked by the guard, connected to the address checked and to no
 * other, and what was refused or failed is kept for the build's error message. It listens on a
 * unix socket in a directory only root can enter.
 */
export class PullProxy {
  readonly outcomes: ProxyOutcome[] = [];
  private readonly sockets = new Set<Duplex>();

  private constructor(
    private readonly server: http.Server,
    readonly socketPath: string,
  ) {}

  static async listen(socketPath: string, guard: DestinationGuard): Promise<PullProxy> {
    const server = http.createServer();
    const proxy = new PullProxy(server, socketPath);
    server.on(
      "connect",
      (req: http.IncomingMessage, client: Duplex, head: Buffer) =>
        void proxy.tunnel(guard, req, client, head),
    );
    server.on("request", (req, res) => void proxy.forward(guard, req, res));
    server.on("connection", (socket) => proxy.track(socket));
    await new Promise<void>((resolve, reject) => {
      server.once("error", reject);
      server.listen(socketPath, () => resolve());
    });
    return proxy;
  }

  private track(socket: Duplex): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", () => socket.destroy());
  }

  /** Checks `host:port` and opens a TCP connection to its checked address; records why not. */
  private async open(guard: DestinationGuard, host: string, port: number): Promise<net.Socket | string> {
    let addresses: string[];
    try {
      const check = await guard.check(host, port);
      if (!check.allowed) {
        this.outcomes.push({ host, port, refused: check.kind, literal: check.literal });
        return "destination not allowed";
      }
      addresses = check.addresses;
    } catch (err) {
      const failed = failureOf(err);
      this.outcomes.push({ host, port, failed });
      return failed;
    }
    return new Promise((resolve) => {
      // by name, so that every checked address may be tried (and only those)
      const upstream = net.connect({ host: canonicalHost(host), port, lookup: pinnedLookup(addresses) });
      const timer = setTimeout(
        () => upstream.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })),
        CONNECT_TIMEOUT_MS,
      );
      upstream.once("connect", () => {
        clearTimeout(timer);
        upstream.removeAllListeners("error");
        this.track(upstream);
        resolve(upstream);
      });
      upstream.once("error", (err) => {
        clearTimeout(timer);
        const failed = failureOf(err);
        this.outcomes.push({ host, port, failed });
        resolve(failed);
      });
    });
  }

  private async tunnel(guard: DestinationGuard, req: http.IncomingMessage, client: Duplex, head: Buffer) {
    const target = authority(req.url ?? "");
    if (!target) {
      client.end("HTTP/1.1 400 not host:port\r\n\r\n");
      return;
    }
    const upstream = await this.open(guard, target.host, target.port);
    if (typeof upstream === "string") {
      // Go reports a refused CONNECT by its status text: the reason, not an internal service's words
      client.end(`HTTP/1.1 ${upstream === "destination not allowed" ? 403 : 502} ${upstream}\r\n\r\n`);
      return;
    }
    client.write("HTTP/1.1 200 Connection Established\r\n\r\n");
    if (head.length > 0) upstream.write(head);
    upstream.pipe(client);
    client.pipe(upstream);
    const end = () => {
      upstream.destroy();
      client.destroy();
    };
    upstream.once("close", end);
    client.once("close", end);
  }

  /** A plain-HTTP request in absolute form (`GET http://host:port/v2/ HTTP/1.1`), sent on as it came. */
  private async forward(guard: DestinationGuard, req: http.IncomingMessage, res: http.ServerResponse) {
    let url: URL;
    try {
      url = new URL(req.url ?? "");
      if (url.protocol !== "http:") throw new Error("not http");
    } catch {
      res.writeHead(400, "not a proxy request").end();
      return;
    }
    const host = url.hostname.replace(/^\[(.*)\]$/, "$1");
    const port = url.port ? Number(url.port) : 80;
    const upstream = await this.open(guard, host, port);
    if (typeof upstream === "string") {
      res.writeHead(upstream === "destination not allowed" ? 403 : 502, upstream).end(upstream);
      return;
    }
    const headers = { ...req.headers };
    for (const h of ["proxy-connection", "proxy-authorization", "connection", "keep-alive"])
      delete headers[h];
    const out = http.request(
      {
        createConnection: () => upstream,
        method: req.method,
        path: `${url.pathname}${url.search}`,
        headers,
        setHost: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.headers);
        answer.pipe(res);
      },
    );
    out.on("error", () => {
      if (!res.headersSent) res.writeHead(502, "connection reset by peer").end();
      else res.destroy();
    });
    req.pipe(out);
  }

  async close(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}
