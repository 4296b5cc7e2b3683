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
 *
 * This file listens, tells the protocols apart and keeps the counters and connections;
 * requests.ts takes requests in, locate.ts finds where they go (auto-resume, traffic tokens),
 * forward.ts and tunnel.ts carry them.
 */
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { Duplex } from "node:stream";
import type tls from "node:tls";
import { type Logger, silentLogger } from "../lib/log.js";
import type { Downstream } from "./downstream.js";
import { type SandboxConnections, SandboxPools } from "./exchanges.js";
import { SandboxLocator } from "./locate.js";
import { newProxyMetrics } from "./metrics.js";
import { type ErrorReply, noRouteReply, upstreamErrorReply, writeRawReply } from "./replies.js";
import { onRequest, onStream, onUpgrade, type RequestContext } from "./requests.js";
import { ENVD_PORT, type ProxyTarget } from "./routing.js";
import type { ProxyMetrics, SandboxResolver } from "./types.js";

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

class SandboxProxy implements ProxyServer, RequestContext {
  readonly server: net.Server;
  readonly metrics: ProxyMetrics = newProxyMetrics();
  private readonly h1: http.Server;
  private readonly h2: http2.Http2Server;
  private readonly sockets = new Set<net.Socket>();
  private readonly pools: SandboxPools;
  private readonly resolver: SandboxResolver;
  readonly log: Logger;
  readonly trusted: boolean;
  private readonly connectTimeoutMs: number;
  readonly noRouteReply: ErrorReply;
  readonly locator: SandboxLocator;

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
    this.locator = new SandboxLocator({
      resolver: this.resolver,
      log: this.log,
      metrics: this.metrics,
      pools: this.pools,
    });

    // Long uploads and streams must not hit a whole-request deadline.
    this.h1 = http.createServer({ requestTimeout: 0 }, (req, res) => {
      onRequest(this, req, res).catch((err: unknown) => this.failed(err, () => res.destroy()));
    });
    // Longer than the usual 60 s idle timeout of balancers in front, so they close first.
    this.h1.keepAliveTimeout = 65_000;
    // Keep answering a client that half-closed after sending its request (Node's own switch).
    (this.h1 as http.Server & { httpAllowHalfOpen: boolean }).httpAllowHalfOpen = true;
    this.h1.on("upgrade", (req: http.IncomingMessage, duplex: Duplex, head: Buffer) => {
      const socket = duplex as net.Socket; // what a net.Server hands over
      onUpgrade(this, req, socket, head).catch((err: unknown) => this.failed(err, () => socket.destroy()));
    });

    this.h2 = http2.createServer({ settings: { initialWindowSize: H2_STREAM_WINDOW } });
    this.h2.on("session", (session: http2.ServerHttp2Session) =>
      session.setLocalWindowSize(H2_SESSION_WINDOW),
    );
    this.h2.on("sessionError", (err: Error) => this.log.debug({ err }, "http2 session error"));
    this.h2.on("stream", (stream: http2.ServerHttp2Stream, headers: http2.IncomingHttpHeaders) => {
      onStream(this, stream, headers).catch((err: unknown) => this.failed(err, () => stream.destroy()));
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
    else this.log.warn({ ...fields, err }, "sandbox port unreachable");
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
