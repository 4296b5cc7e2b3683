/**
 * The sandbox proxy: one listening port carrying every client's traffic to a port inside a
 * sandbox (envd on 49983, or any server the user started).
 *
 *   const proxy = createProxyServer({ resolver, domain: "sandbox.example.com", log });
 *   await proxy.listen(3002, "0.0.0.0");
 *   proxy.closeSandboxConnections(id); // on kill or pause, once the resolver no longer says running
 *   proxy.metrics;                     // live counters, read on scrape
 *   await proxy.close();
 *
 * Routing: headers `E2b-Sandbox-Id` + `E2b-Sandbox-Port` win; else the host's first label
 * `{port}-{sandboxID}` under any domain; else, for a signed `/files` URL (the client's
 * `downloadUrl`/`uploadUrl` with `E2B_SANDBOX_URL`), envd of the sandbox whose token signed it. The resolver maps the id to the sandbox's address; the
 * proxy connects to `address:port`. Answers of its own are JSON `{code, message}`: 400 without
 * routing information, 502 with `sandboxID` for an unknown, killed or paused sandbox (e2b's
 * `isRunning()` reads 502 as "not running") and, with `port`, when nothing listens on the port.
 * A paused sandbox whose `autoResume` is set is resumed (once, however many requests wait) first.
 *
 * Protocols: HTTP/1.1 and h2c (prior knowledge, told apart by the preface) on the same port.
 * Both go upstream as HTTP/1.1 over a keep-alive pool per sandbox: any user server speaks it,
 * chunked bodies stream both ways, and the pool being per sandbox means a reused address can
 * never receive a previous sandbox's connection. Bodies are piped, never buffered. `Upgrade`
 * requests (WebSocket and others) are forwarded, and after the 101 the two sockets are joined
 * with half-close kept.
 */
import { timingSafeEqual } from "node:crypto";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { Duplex } from "node:stream";
import type tls from "node:tls";
import { type Logger, silentLogger } from "../lib/log.js";
import { DomainError, HTTP_STATUS } from "../model/errors.js";
import { type Downstream, H1Downstream, H2Downstream } from "./downstream.js";
import { type ExchangeContext, type SandboxConnections, SandboxPools, type Upstream } from "./exchanges.js";
import { forward } from "./forward.js";
import { clientAddress, clientProto, rawFromH2, upstreamRequestHeaders } from "./headers.js";
import {
  brokenReply,
  type ErrorReply,
  noRouteReply,
  notRunning,
  resumeForbiddenReply,
  TRAFFIC_TOKEN_HEADER,
  trafficTokenReply,
  upstreamErrorReply,
  writeRawReply,
} from "./replies.js";
import { ENVD_PORT, type ProxyTarget, parseTarget, signedFileMatcher } from "./routing.js";
import { tunnel } from "./tunnel.js";
import type { ProxyMetrics, SandboxAccess, SandboxLocation, SandboxResolver } from "./types.js";

export interface ProxyServerOptions {
  resolver: SandboxResolver;
  /** The sandbox domain, e.g. `sandbox.example.com`; only shown in messages, as any suffix routes. */
  domain?: string;
  log?: Logger;
  /** Keep and extend clients' `X-Forwarded-*`: only behind a balancer that sets them. Default false. */
  trustForwardedHeaders?: boolean;
  /** Upstream connections per sandbox; requests beyond it wait. Default 256. */
  maxSocketsPerSandbox?: number;
  /** How long connecting to a sandbox may take before 502. Default 5000. */
  connectTimeoutMs?: number;
  /** How long an idle upstream connection is kept (less when the server announces less). Default 30000. */
  idleTimeoutMs?: number;
}

export interface ProxyServer {
  /** The listening socket server; HTTP/1.1 and HTTP/2 are dispatched from it. */
  readonly server: net.Server;
  readonly metrics: Readonly<ProxyMetrics>;
  /** The bound port (useful after listening on 0). */
  readonly port: number;
  listen(port: number, host?: string): Promise<void>;
  /**
   * Serves a connection that arrived elsewhere, already decrypted (the HTTPS listener's):
   * HTTP/2 when the client chose `h2` by ALPN, HTTP/1.1 otherwise. Closed with the proxy.
   */
  serveDecrypted(socket: tls.TLSSocket): void;
  /** Destroys every client and upstream socket of the sandbox's open exchanges and its pool. */
  closeSandboxConnections(sandboxID: string): void;
  /** Stops listening and destroys every connection. */
  close(): Promise<void>;
}

export function createProxyServer(options: ProxyServerOptions): ProxyServer {
  return new SandboxProxy(options);
}

/** The first bytes of every HTTP/2 connection with prior knowledge (h2c). */
const H2_PREFACE = Buffer.from("PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
/** HTTP/2 flow-control windows large enough that a stream is not held back on a fast link. */
const H2_STREAM_WINDOW = 1 << 20;
const H2_SESSION_WINDOW = 8 << 20;

const ignore = (): void => {};

class SandboxProxy implements ProxyServer, ExchangeContext {
  readonly server: net.Server;
  readonly metrics: ProxyMetrics = {
    requests: 0,
    active: 0,
    upgrades: 0,
    resumes: 0,
    bytesFromClients: 0,
    bytesToClients: 0,
    responses: {},
    errors: {
      no_route: 0,
      bad_request: 0,
      sandbox_not_found: 0,
      sandbox_paused: 0,
      resume_failed: 0,
      sandbox_broken: 0,
      forbidden: 0,
      resolver_failed: 0,
      port_closed: 0,
      upstream_unreachable: 0,
      upstream_aborted: 0,
      client_aborted: 0,
      cut: 0,
    },
  };
  private readonly h1: http.Server;
  private readonly h2: http2.Http2Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly pools: SandboxPools;
  private readonly resuming = new Map<
    string,
    Promise<{ address: string; access?: SandboxAccess } | ErrorReply>
  >();
  private readonly resolver: SandboxResolver;
  readonly log: Logger;
  readonly trusted: boolean;
  private readonly connectTimeoutMs: number;
  private readonly noRouteReply: ErrorReply;

  constructor(options: ProxyServerOptions) {
    this.resolver = options.resolver;
    this.log = options.log ?? silentLogger;
    this.trusted = options.trustForwardedHeaders ?? false;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.pools = new SandboxPools({
      maxSockets: options.maxSocketsPerSandbox ?? 256,
      idleTimeoutMs: options.idleTimeoutMs ?? 30_000,
    });
    this.noRouteReply = noRouteReply(options.domain);

    // Long uploads and streams must not hit a whole-request deadline.
    this.h1 = http.createServer({ requestTimeout: 0 }, (req, res) => {
      this.onRequest(req, res).catch((err: unknown) => this.failed(err, () => res.destroy()));
    });
    // Longer than the usual 60 s idle timeout of balancers in front, so they close first.
    this.h1.keepAliveTimeout = 65_000;
    // Keep answering a client that half-closed after sending its request (Node's own switch).
    (this.h1 as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    this.h1.on("upgrade", (req: http.IncomingMessage, duplex: Duplex, head: Buffer) => {
      const socket = duplex as net.Socket; // what a net.Server hands over
      this.onUpgrade(req, socket, head).catch((err: unknown) => this.failed(err, () => socket.destroy()));
    });

    this.h2 = http2.createServer({ settings: { initialWindowSize: H2_STREAM_WINDOW } });
    this.h2.on("session", (session: http2.ServerHttp2Session) =>
      session.setLocalWindowSize(H2_SESSION_WINDOW),
    );
    this.h2.on("sessionError", (err: Error) => this.log.debug({ err }, "http2 session error"));
    this.h2.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
      this.onStream(stream, headers).catch((err: unknown) => this.failed(err, () => stream.destroy()));
    });

    this.server = net.createServer({ allowHalfOpen: true, noDelay: true }, (socket) => this.accept(socket));
  }

  get port(): number {
    const address = this.server.address();
    return typeof address === "object" && address ? address.port : 0;
  }

  listen(port: number, host = "0.0.0.0"): Promise<void> {
    return new Promise((resolve, reject) => {
      this.server.once("error", reject);
      this.server.listen(port, host, () => {
        this.server.off("error", reject);
        resolve();
      });
    });
  }

  serveDecrypted(socket: tls.TLSSocket): void {
    this.track(socket);
    if (socket.alpnProtocol === "h2") this.h2.emit("connection", socket);
    else this.h1.emit("connection", socket);
  }

  closeSandboxConnections(sandboxID: string): void {
    this.pools.cut(sandboxID);
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    this.pools.cutAll();
    this.h1.close(ignore);
    this.h2.close(ignore);
    await closed;
  }

  private track(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", ignore); // the protocol servers handle errors once they own the socket
    socket.setNoDelay(true);
  }

  private accept(socket: net.Socket): void {
    this.track(socket);
    let seen: Buffer | undefined;
    const sniff = (chunk: Buffer): void => {
      const data = seen ? Buffer.concat([seen, chunk]) : chunk;
      const n = Math.min(data.length, H2_PREFACE.length);
      const isH2 = data.subarray(0, n).equals(H2_PREFACE.subarray(0, n));
      if (isH2 && n < H2_PREFACE.length) {
        seen = data; // a prefix of the preface so far: wait for more
        return;
      }
      socket.off("data", sniff);
      socket.pause();
      socket.unshift(data);
      if (isH2) {
        // The session reads what is buffered on the next tick; resuming here would flow it
        // to no listener first and lose the preface.
        this.h2.emit("connection", socket);
      } else {
        this.h1.emit("connection", socket);
        socket.resume();
      }
    };
    socket.on("data", sniff);
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    this.metrics.requests++;
    const down = new H1Downstream(res);
    const headers = req.headers;
    const target =
      parseTarget(headers["e2b-sandbox-id"], headers["e2b-sandbox-port"], headers.host) ??
      (await this.signedTarget(req.method ?? "GET", req.url ?? "/"));
    if (!target) return this.replyWith(down, this.noRouteReply);
    const to = await this.locate(target, headers[TRAFFIC_TOKEN_HEADER]);
    if (!isUpstream(to)) return this.replyWith(down, to);
    if (down.gone) return;
    const length = headers["content-length"];
    const hasBody = length !== undefined ? length !== "0" : headers["transfer-encoding"] !== undefined;
    const upstreamHeaders = upstreamRequestHeaders(req.rawHeaders, {
      clientAddress: clientAddress(req.socket),
      proto: clientProto(req.socket),
      trusted: this.trusted,
      upgrade: false,
      ...(to.host !== undefined ? { host: to.host } : {}),
    });
    forward(
      this,
      target,
      to,
      req.method ?? "GET",
      req.url ?? "/",
      upstreamHeaders,
      hasBody ? req : null,
      down,
    );
  }

  private async onStream(stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders): Promise<void> {
    this.metrics.requests++;
    stream.on("error", ignore); // resets surface as "close"; nothing else to do with them
    const down = new H2Downstream(stream);
    const method = headers[":method"] ?? "GET";
    if (method === "CONNECT") {
      return this.replyWith(down, {
        status: 405,
        kind: "bad_request",
        body: { code: 405, message: "CONNECT is not supported by the sandbox proxy" },
      });
    }
    const target =
      parseTarget(
        headers["e2b-sandbox-id"],
        headers["e2b-sandbox-port"],
        headers[":authority"] ?? headers.host,
      ) ?? (await this.signedTarget(method, headers[":path"] ?? "/"));
    if (!target) return this.replyWith(down, this.noRouteReply);
    const to = await this.locate(target, headers[TRAFFIC_TOKEN_HEADER]);
    if (!isUpstream(to)) return this.replyWith(down, to);
    if (down.gone) return;
    const upstreamHeaders = upstreamRequestHeaders(rawFromH2(headers), {
      clientAddress: clientAddress(stream.session?.socket),
      proto: clientProto(stream.session?.socket),
      trusted: this.trusted,
      upgrade: false,
      ...(to.host !== undefined ? { host: to.host } : {}),
    });
    forward(
      this,
      target,
      to,
      method,
      headers[":path"] ?? "/",
      upstreamHeaders,
      stream.endAfterHeaders ? null : stream,
      down,
    );
  }

  private async onUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    const metrics = this.metrics;
    metrics.requests++;
    metrics.upgrades++;
    socket.setTimeout(0); // a tunnel may idle for as long as both ends like
    const headers = req.headers;
    const target = parseTarget(headers["e2b-sandbox-id"], headers["e2b-sandbox-port"], headers.host);
    if (!target) return this.replyRaw(socket, this.noRouteReply);
    const to = await this.locate(target, headers[TRAFFIC_TOKEN_HEADER]);
    if (!isUpstream(to)) return this.replyRaw(socket, to);
    if (socket.destroyed) return;

    tunnel(this, target, to, req, socket, head);
  }

  /** A signed file URL without routing information goes to the sandbox whose token signed it. */
  private async signedTarget(method: string, url: string): Promise<ProxyTarget | undefined> {
    if (!this.resolver.resolveSigned) return undefined;
    const matches = signedFileMatcher(method, url);
    if (!matches) return undefined;
    try {
      const sandboxID = await this.resolver.resolveSigned(matches);
      return sandboxID ? { sandboxID, port: ENVD_PORT } : undefined;
    } catch (err) {
      this.log.error({ err }, "signed URL lookup failed");
      return undefined;
    }
  }

  /**
   * Where a request goes: the sandbox's address, resuming it first when it is paused with
   * autoResume, once its traffic access token (if it is private) checks out; or the error to
   * answer.
   */
  private async locate(
    target: ProxyTarget,
    token: string | string[] | undefined,
  ): Promise<Upstream | ErrorReply> {
    const { sandboxID } = target;
    let location: SandboxLocation | undefined;
    try {
      location = await this.resolver.resolve(sandboxID);
    } catch (err) {
      this.log.error({ sandboxId: sandboxID, err }, "sandbox resolver failed");
      return {
        status: 500,
        kind: "resolver_failed",
        body: { code: 500, message: `Could not look up the sandbox ${sandboxID}; try again`, sandboxID },
      };
    }
    if (location?.state === "running") {
      return (
        refusedToken(target, location.access, token) ?? upstreamOf(target, location.address, location.access)
      );
    }
    if (location?.state === "error") return brokenReply(sandboxID, location.reason);
    if (!location) {
      // Gone without the orchestrator telling us: drop what is left of it.
      if (this.pools.has(sandboxID)) this.closeSandboxConnections(sandboxID);
      return notRunning(
        sandboxID,
        "sandbox_not_found",
        `The sandbox ${sandboxID} was not found or is not running`,
      );
    }
    if (!location.autoResume || !this.resolver.resume) {
      return notRunning(
        sandboxID,
        "sandbox_paused",
        `The sandbox ${sandboxID} is paused and not running; connect to it (Sandbox.connect) to resume it`,
      );
    }
    // traffic without the token wakes nobody
    if (refusedToken(target, location.access, token)) return resumeForbiddenReply(sandboxID);
    const resumed = await this.resume(sandboxID);
    return "address" in resumed ? upstreamOf(target, resumed.address, resumed.access) : resumed;
  }

  /** One resume however many requests wait on it. */
  private resume(sandboxID: string): Promise<{ address: string; access?: SandboxAccess } | ErrorReply> {
    let pending = this.resuming.get(sandboxID);
    if (!pending) {
      this.metrics.resumes++;
      this.log.info({ sandboxId: sandboxID }, "resuming a paused sandbox on request");
      const failed = notRunning(
        sandboxID,
        "resume_failed",
        `The sandbox ${sandboxID} is paused and could not be resumed`,
      );
      pending = this.resolver.resume!(sandboxID)
        .then(
          (resumed) => resumed ?? failed,
          (err: unknown): ErrorReply => {
            // the team at its limit: said as the API would say it to a connect
            if (err instanceof DomainError && err.code === "quota") {
              this.log.info({ sandboxId: sandboxID, reason: err.message }, "auto-resume refused");
              const status = HTTP_STATUS[err.code];
              return {
                status,
                kind: "resume_failed",
                body: { code: status, message: err.message, sandboxID },
              };
            }
            this.log.error({ sandboxId: sandboxID, err }, "auto-resume failed");
            return failed;
          },
        )
        .finally(() => this.resuming.delete(sandboxID));
      this.resuming.set(sandboxID, pending);
    }
    return pending;
  }

  connectionsOf(sandboxID: string): SandboxConnections {
    return this.pools.of(sandboxID);
  }

  upstreamError(target: ProxyTarget, err: NodeJS.ErrnoException): ErrorReply {
    // envd not answering may mean the sandbox stopped working: have it looked at now, so
    // the next request gets the answer (the health watch would notice within seconds too)
    if (target.port === ENVD_PORT && this.resolver.checkHealth) {
      this.resolver.checkHealth(target.sandboxID).catch((e: unknown) => {
        this.log.error({ sandboxId: target.sandboxID, err: e }, "sandbox health check failed");
      });
    }
    const reply = upstreamErrorReply(target, err);
    const fields = { sandboxId: target.sandboxID, port: target.port };
    if (reply.kind === "port_closed") this.log.debug(fields, "nothing listens on the sandbox port");
    else this.log.warn({ ...fields, err: err.code ?? err.message }, "sandbox port unreachable");
    return reply;
  }

  replyWith(down: Downstream, error: ErrorReply): void {
    this.count(error);
    if (!down.gone) down.reply(error);
  }

  replyRaw(socket: net.Socket, error: ErrorReply): void {
    this.count(error);
    writeRawReply(socket, error);
  }

  private count(error: ErrorReply): void {
    this.metrics.errors[error.kind]++;
    this.metrics.responses[error.status] = (this.metrics.responses[error.status] ?? 0) + 1;
  }

  private failed(err: unknown, destroy: () => void): void {
    this.log.error({ err }, "proxy request failed");
    destroy();
  }

  readonly countFromClient = (chunk: Buffer): void => {
    this.metrics.bytesFromClients += chunk.length;
  };

  readonly countToClient = (chunk: Buffer): void => {
    this.metrics.bytesToClients += chunk.length;
  };

  /** New upstream connections get a connect deadline; pooled ones are already connected. */
  readonly onUpstreamSocket = (socket: net.Socket): void => {
    if (!socket.connecting) return;
    socket.setNoDelay(true);
    const timer = setTimeout(() => {
      const err: NodeJS.ErrnoException = new Error(`connect timed out after ${this.connectTimeoutMs} ms`);
      err.code = "ETIMEDOUT";
      socket.destroy(err);
    }, this.connectTimeoutMs);
    const clear = (): void => clearTimeout(timer);
    socket.once("connect", clear);
    socket.once("close", clear);
  };
}

function isUpstream(to: Upstream | ErrorReply): to is Upstream {
  return "address" in to;
}

/** How a request reaches its port: TLS for the sandbox's `httpsPorts`, its `maskRequestHost`. */
function upstreamOf(target: ProxyTarget, address: string, access: SandboxAccess | undefined): Upstream {
  if (target.port === ENVD_PORT || !access) return { address, tls: false };
  const mask = access.maskRequestHost?.replaceAll("${PORT}", String(target.port));
  return {
    address,
    tls: access.httpsPorts?.includes(target.port) ?? false,
    ...(mask !== undefined ? { host: mask } : {}),
  };
}

/**
 * The 403 for a private sandbox's port (every one but envd's, which has its own token) when
 * the request lacks its traffic access token or sends another; compared in constant time.
 */
function refusedToken(
  target: ProxyTarget,
  access: SandboxAccess | undefined,
  sent: string | string[] | undefined,
): ErrorReply | undefined {
  const expected = access?.trafficAccessToken;
  if (!expected || target.port === ENVD_PORT) return undefined;
  const token = Array.isArray(sent) ? sent[0] : sent;
  if (token === undefined) return trafficTokenReply(target.sandboxID, false);
  const a = Buffer.from(token);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b)
    ? undefined
    : trafficTokenReply(target.sandboxID, true);
}
