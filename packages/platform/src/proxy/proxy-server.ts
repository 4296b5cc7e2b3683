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
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import type { Duplex, Readable, Writable } from "node:stream";
import { downstreamH2Headers, downstreamRawHeaders, rawFromH2, upstreamRequestHeaders } from "./headers.js";
import { ENVD_PORT, type ProxyTarget, parseTarget, signedFileMatcher } from "./routing.js";
import type { ProxyErrorKind, ProxyLogger, ProxyMetrics, SandboxLocation, SandboxResolver } from "./types.js";

export interface ProxyServerOptions {
  resolver: SandboxResolver;
  /** The sandbox domain, e.g. `sandbox.example.com`; only shown in messages, as any suffix routes. */
  domain?: string;
  log?: ProxyLogger;
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

interface ErrorReply {
  status: number;
  kind: ProxyErrorKind;
  body: { code: number; message: string; sandboxID?: string; port?: number };
}

/** The client's side of one exchange, for HTTP/1.1 and HTTP/2 alike. */
interface Downstream {
  /** True once the client has gone away. */
  readonly gone: boolean;
  /** Sends the sandbox's response head; returns where the body goes, or null when it has none. */
  head(res: http.IncomingMessage): Writable | null;
  /** Answers with the proxy's own error. */
  reply(error: ErrorReply): void;
  destroy(): void;
  onClose(listener: () => void): void;
}

interface Exchange {
  cut(): void;
}

interface SandboxConnections {
  agent: http.Agent;
  exchanges: Set<Exchange>;
}

const ignore = (): void => {};

class H1Downstream implements Downstream {
  constructor(private readonly res: http.ServerResponse) {}

  get gone(): boolean {
    return this.res.destroyed;
  }

  head(upstream: http.IncomingMessage): Writable | null {
    const res = this.res;
    const status = upstream.statusCode ?? 502;
    res.writeHead(status, upstream.statusMessage, downstreamRawHeaders(upstream.rawHeaders));
    // A body of unknown length may be a stream: show the head now, not with the first message.
    if (upstream.headers["content-length"] === undefined && status !== 204 && status !== 304)
      res.flushHeaders();
    if (upstream.headers["transfer-encoding"] !== undefined) {
      upstream.once("end", () => {
        const raw = upstream.rawTrailers;
        if (raw.length === 0) return;
        const trailers: [string, string][] = [];
        for (let i = 0; i < raw.length; i += 2) trailers.push([raw[i]!, raw[i + 1]!]);
        res.addTrailers(trailers);
      });
    }
    return res;
  }

  reply(error: ErrorReply): void {
    const res = this.res;
    if (res.headersSent) return void res.destroy();
    const body = JSON.stringify(error.body);
    res.writeHead(error.status, {
      "Content-Type": "application/json",
      "Content-Length": Buffer.byteLength(body),
    });
    res.end(body);
  }

  destroy(): void {
    this.res.destroy();
  }

  onClose(listener: () => void): void {
    this.res.once("close", listener);
  }
}

class H2Downstream implements Downstream {
  constructor(private readonly stream: http2.ServerHttp2Stream) {}

  get gone(): boolean {
    return this.stream.destroyed;
  }

  head(upstream: http.IncomingMessage): Writable | null {
    const stream = this.stream;
    const withTrailers = upstream.headers.trailer !== undefined;
    stream.respond(downstreamH2Headers(upstream), withTrailers ? { waitForTrailers: true } : undefined);
    if (withTrailers) stream.once("wantTrailers", () => stream.sendTrailers(upstream.trailers));
    // HEAD, 204 and 304 end the stream with the head.
    return stream.writableEnded ? null : stream;
  }

  reply(error: ErrorReply): void {
    const stream = this.stream;
    if (stream.headersSent) {
      this.destroy();
      return;
    }
    const body = JSON.stringify(error.body);
    stream.respond({
      ":status": error.status,
      "content-type": "application/json",
      "content-length": Buffer.byteLength(body),
    });
    stream.end(body);
    stream.resume(); // discard an unread request body so the client is not held by flow control
  }

  destroy(): void {
    // An error resets at once with INTERNAL_ERROR; close(code) would first end the stream cleanly.
    this.stream.destroy(new Error("sandbox exchange cut"));
  }

  onClose(listener: () => void): void {
    this.stream.once("close", listener);
  }
}

class SandboxProxy implements ProxyServer {
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
  private readonly sandboxes = new Map<string, SandboxConnections>();
  private readonly resuming = new Map<string, Promise<string | undefined>>();
  private readonly resolver: SandboxResolver;
  private readonly log: ProxyLogger;
  private readonly trusted: boolean;
  private readonly maxSockets: number;
  private readonly connectTimeoutMs: number;
  private readonly idleTimeoutMs: number;
  private readonly noRouteReply: ErrorReply;

  constructor(options: ProxyServerOptions) {
    this.resolver = options.resolver;
    this.log = options.log ?? ignore;
    this.trusted = options.trustForwardedHeaders ?? false;
    this.maxSockets = options.maxSocketsPerSandbox ?? 256;
    this.connectTimeoutMs = options.connectTimeoutMs ?? 5000;
    this.idleTimeoutMs = options.idleTimeoutMs ?? 30_000;
    const host = `{port}-{sandboxID}.${options.domain ?? "{domain}"}`;
    this.noRouteReply = {
      status: 400,
      kind: "no_route",
      body: {
        code: 400,
        message: `No sandbox in the request: send the Host "${host}" or the headers E2b-Sandbox-Id and E2b-Sandbox-Port`,
      },
    };

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
    this.h2.on("sessionError", (err: Error) =>
      this.log("debug", "http2 session error", { err: err.message }),
    );
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

  closeSandboxConnections(sandboxID: string): void {
    const connections = this.sandboxes.get(sandboxID);
    if (!connections) return;
    this.sandboxes.delete(sandboxID);
    for (const exchange of connections.exchanges) exchange.cut();
    connections.agent.destroy();
  }

  async close(): Promise<void> {
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    for (const socket of this.sockets) socket.destroy();
    for (const sandboxID of [...this.sandboxes.keys()]) this.closeSandboxConnections(sandboxID);
    this.h1.close(ignore);
    this.h2.close(ignore);
    await closed;
  }

  private accept(socket: net.Socket): void {
    this.sockets.add(socket);
    socket.once("close", () => this.sockets.delete(socket));
    socket.on("error", ignore); // the protocol servers handle errors once they own the socket
    socket.setNoDelay(true);
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
    const address = await this.locate(target.sandboxID);
    if (typeof address !== "string") return this.replyWith(down, address);
    if (down.gone) return;
    const length = headers["content-length"];
    const hasBody = length !== undefined ? length !== "0" : headers["transfer-encoding"] !== undefined;
    const upstreamHeaders = upstreamRequestHeaders(req.rawHeaders, {
      clientAddress: clientAddress(req.socket),
      trusted: this.trusted,
      upgrade: false,
    });
    this.forward(
      target,
      address,
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
    const address = await this.locate(target.sandboxID);
    if (typeof address !== "string") return this.replyWith(down, address);
    if (down.gone) return;
    const upstreamHeaders = upstreamRequestHeaders(rawFromH2(headers), {
      clientAddress: clientAddress(stream.session?.socket),
      trusted: this.trusted,
      upgrade: false,
    });
    this.forward(
      target,
      address,
      method,
      headers[":path"] ?? "/",
      upstreamHeaders,
      stream.endAfterHeaders ? null : stream,
      down,
    );
  }

  /** Sends one request to the sandbox and its response back; retries once a bodiless request on a stale pooled socket. */
  private forward(
    target: ProxyTarget,
    address: string,
    method: string,
    path: string,
    headers: string[],
    body: Readable | null,
    down: Downstream,
  ): void {
    const metrics = this.metrics;
    const connections = this.connectionsOf(target.sandboxID);
    let up: http.ClientRequest | undefined;
    let upstream: http.IncomingMessage | undefined;
    let ending = false; // the proxy itself is ending the exchange: not a client abort

    const exchange: Exchange = {
      cut: () => {
        metrics.errors.cut++;
        ending = true;
        up?.destroy();
        down.destroy();
      },
    };

    const onResponse = (res: http.IncomingMessage): void => {
      upstream = res;
      const status = res.statusCode ?? 502;
      metrics.responses[status] = (metrics.responses[status] ?? 0) + 1;
      res.on("close", () => {
        if (res.complete || down.gone) return;
        metrics.errors.upstream_aborted++;
        ending = true;
        down.destroy();
      });
      let sink: Writable | null;
      try {
        sink = down.head(res);
      } catch (err) {
        this.log("warn", "could not pass a sandbox response on", {
          sandboxID: target.sandboxID,
          err: String(err),
        });
        ending = true;
        up?.destroy();
        down.destroy();
        return;
      }
      if (!sink) return void res.resume();
      res.on("data", this.countToClient);
      res.pipe(sink);
    };

    const send = (attempt: number): void => {
      let request: http.ClientRequest;
      try {
        request = http.request({
          host: address,
          port: target.port,
          method,
          path,
          headers,
          agent: connections.agent,
        });
      } catch (err) {
        ending = true;
        this.replyWith(down, {
          status: 400,
          kind: "bad_request",
          body: { code: 400, message: `The request cannot be forwarded: ${(err as Error).message}` },
        });
        return;
      }
      up = request;
      request.once("socket", this.onUpstreamSocket);
      request.on("response", onResponse);
      request.on("error", (err: NodeJS.ErrnoException) => {
        if (upstream || down.gone) return;
        if (
          !body &&
          attempt === 0 &&
          request.reusedSocket &&
          (err.code === "ECONNRESET" || err.code === "EPIPE")
        ) {
          return send(1); // the sandbox closed an idle pooled connection just as it was reused
        }
        this.replyWith(down, this.upstreamError(target, err));
      });
      if (body && attempt === 0) {
        // Send the head now unless body bytes already wait to go with it: a streaming client
        // may wait for the response head before it writes.
        if (body.readableLength === 0) request.flushHeaders();
        body.on("data", this.countFromClient);
        body.pipe(request);
      } else {
        request.end();
      }
    };

    metrics.active++;
    connections.exchanges.add(exchange);
    down.onClose(() => {
      metrics.active--;
      connections.exchanges.delete(exchange);
      if (upstream?.complete) {
        // A request body still going out would hold its pooled socket forever.
        if (!up?.writableFinished) up?.destroy();
        return;
      }
      if (!ending) metrics.errors.client_aborted++;
      up?.destroy();
    });
    send(0);
  }

  private async onUpgrade(req: http.IncomingMessage, socket: net.Socket, head: Buffer): Promise<void> {
    const metrics = this.metrics;
    metrics.requests++;
    metrics.upgrades++;
    socket.setTimeout(0); // a tunnel may idle for as long as both ends like
    const headers = req.headers;
    const target = parseTarget(headers["e2b-sandbox-id"], headers["e2b-sandbox-port"], headers.host);
    if (!target) return this.replyRaw(socket, this.noRouteReply);
    const address = await this.locate(target.sandboxID);
    if (typeof address !== "string") return this.replyRaw(socket, address);
    if (socket.destroyed) return;

    const connections = this.connectionsOf(target.sandboxID);
    const port = target.port;
    const up = http.request({
      host: address,
      port,
      method: req.method,
      path: req.url,
      headers: upstreamRequestHeaders(req.rawHeaders, {
        clientAddress: clientAddress(socket),
        trusted: this.trusted,
        upgrade: true,
      }),
      // Dedicated and half-open: after the 101 this socket is one end of a raw tunnel.
      createConnection: () => net.connect({ host: address, port, allowHalfOpen: true, noDelay: true }),
    });
    let tunnel: net.Socket | undefined;
    let answered = false;
    const exchange: Exchange = {
      cut: () => {
        metrics.errors.cut++;
        up.destroy();
        tunnel?.destroy();
        socket.destroy();
      },
    };
    metrics.active++;
    connections.exchanges.add(exchange);
    // A side that closes cleanly may leave bytes queued for the other: flush them, then close.
    socket.once("close", (hadError: boolean) => {
      metrics.active--;
      connections.exchanges.delete(exchange);
      if (!tunnel) up.destroy();
      else if (hadError) tunnel.destroy();
      else tunnel.destroySoon();
    });

    up.once("socket", this.onUpstreamSocket);
    up.on("upgrade", (res: http.IncomingMessage, upstream: net.Socket, upstreamHead: Buffer) => {
      answered = true;
      tunnel = upstream;
      metrics.responses[101] = (metrics.responses[101] ?? 0) + 1;
      upstream.on("error", () => socket.destroy());
      upstream.once("close", (hadError: boolean) => (hadError ? socket.destroy() : socket.destroySoon()));
      if (socket.destroyed) return void upstream.destroy();
      socket.write(
        `HTTP/1.1 101 ${res.statusMessage || "Switching Protocols"}\r\n${headerBlock(res.rawHeaders)}\r\n`,
      );
      if (upstreamHead.length > 0) {
        metrics.bytesToClients += upstreamHead.length;
        socket.write(upstreamHead);
      }
      if (head.length > 0) {
        metrics.bytesFromClients += head.length;
        upstream.write(head);
      }
      socket.on("data", this.countFromClient);
      upstream.on("data", this.countToClient);
      socket.pipe(upstream);
      upstream.pipe(socket);
    });
    up.on("response", (res: http.IncomingMessage) => {
      // Refused upgrade: pass the answer on and end the connection, whose framing is now ours.
      answered = true;
      const status = res.statusCode ?? 502;
      metrics.responses[status] = (metrics.responses[status] ?? 0) + 1;
      socket.write(
        `HTTP/1.1 ${status} ${res.statusMessage ?? ""}\r\n${headerBlock(downstreamRawHeaders(res.rawHeaders))}Connection: close\r\n\r\n`,
      );
      res.on("data", this.countToClient);
      res.pipe(socket);
    });
    up.on("error", (err: NodeJS.ErrnoException) => {
      if (answered || socket.destroyed) return void socket.destroy();
      this.replyRaw(socket, this.upstreamError(target, err));
    });
    up.end();
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
      this.log("error", "signed URL lookup failed", { err: String(err) });
      return undefined;
    }
  }

  /** The sandbox's address, resuming it first when it is paused with autoResume; or the error to answer. */
  private async locate(sandboxID: string): Promise<string | ErrorReply> {
    let location: SandboxLocation | undefined;
    try {
      location = await this.resolver.resolve(sandboxID);
    } catch (err) {
      this.log("error", "sandbox resolver failed", { sandboxID, err: String(err) });
      return {
        status: 500,
        kind: "resolver_failed",
        body: { code: 500, message: `Could not look up the sandbox ${sandboxID}; try again`, sandboxID },
      };
    }
    if (location?.state === "running") return location.address;
    if (!location) {
      // Gone without the orchestrator telling us: drop what is left of it.
      if (this.sandboxes.has(sandboxID)) this.closeSandboxConnections(sandboxID);
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
    const address = await this.resume(sandboxID);
    return (
      address ??
      notRunning(sandboxID, "resume_failed", `The sandbox ${sandboxID} is paused and could not be resumed`)
    );
  }

  /** One resume however many requests wait on it. */
  private resume(sandboxID: string): Promise<string | undefined> {
    let pending = this.resuming.get(sandboxID);
    if (!pending) {
      this.metrics.resumes++;
      this.log("info", "resuming a paused sandbox on request", { sandboxID });
      pending = this.resolver.resume!(sandboxID)
        .then(
          (resumed) => resumed?.address,
          (err: unknown) => {
            this.log("error", "auto-resume failed", { sandboxID, err: String(err) });
            return undefined;
          },
        )
        .finally(() => this.resuming.delete(sandboxID));
      this.resuming.set(sandboxID, pending);
    }
    return pending;
  }

  private connectionsOf(sandboxID: string): SandboxConnections {
    let connections = this.sandboxes.get(sandboxID);
    if (!connections) {
      connections = {
        agent: new http.Agent({
          keepAlive: true,
          maxSockets: this.maxSockets,
          maxFreeSockets: 64,
          scheduling: "lifo",
          timeout: this.idleTimeoutMs,
        }),
        exchanges: new Set(),
      };
      this.sandboxes.set(sandboxID, connections);
    }
    return connections;
  }

  private upstreamError(target: ProxyTarget, err: NodeJS.ErrnoException): ErrorReply {
    const { sandboxID, port } = target;
    if (err.code === "ECONNREFUSED") {
      this.log("debug", "nothing listens on the sandbox port", { sandboxID, port });
      return {
        status: 502,
        kind: "port_closed",
        body: {
          code: 502,
          message: `The sandbox ${sandboxID} is running but nothing is listening on port ${port}`,
          sandboxID,
          port,
        },
      };
    }
    this.log("warn", "sandbox port unreachable", { sandboxID, port, err: err.code ?? err.message });
    return {
      status: 502,
      kind: "upstream_unreachable",
      body: {
        code: 502,
        message: `The sandbox ${sandboxID} is not reachable on port ${port} (${err.code ?? err.message})`,
        sandboxID,
        port,
      },
    };
  }

  private replyWith(down: Downstream, error: ErrorReply): void {
    this.count(error);
    if (!down.gone) down.reply(error);
  }

  private replyRaw(socket: net.Socket, error: ErrorReply): void {
    this.count(error);
    if (socket.destroyed) return;
    const body = JSON.stringify(error.body);
    socket.write(
      `HTTP/1.1 ${error.status} ${http.STATUS_CODES[error.status]}\r\nContent-Type: application/json\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
    socket.destroySoon();
  }

  private count(error: ErrorReply): void {
    this.metrics.errors[error.kind]++;
    this.metrics.responses[error.status] = (this.metrics.responses[error.status] ?? 0) + 1;
  }

  private failed(err: unknown, destroy: () => void): void {
    this.log("error", "proxy request failed", { err: err instanceof Error ? err.stack : String(err) });
    destroy();
  }

  private readonly countFromClient = (chunk: Buffer): void => {
    this.metrics.bytesFromClients += chunk.length;
  };

  private readonly countToClient = (chunk: Buffer): void => {
    this.metrics.bytesToClients += chunk.length;
  };

  /** New upstream connections get a connect deadline; pooled ones are already connected. */
  private readonly onUpstreamSocket = (socket: net.Socket): void => {
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

function notRunning(sandboxID: string, kind: ProxyErrorKind, message: string): ErrorReply {
  return { status: 502, kind, body: { code: 502, message, sandboxID } };
}

function clientAddress(socket: net.Socket | undefined): string {
  const address = socket?.remoteAddress ?? "";
  return address.startsWith("::ffff:") ? address.slice(7) : address;
}

function headerBlock(raw: readonly string[]): string {
  let block = "";
  for (let i = 0; i < raw.length; i += 2) block += `${raw[i]}: ${raw[i + 1]}\r\n`;
  return block;
}
