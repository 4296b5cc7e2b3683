import http from "node:http";
import type net from "node:net";
import { Duplex } from "node:stream";
import tls from "node:tls";
import type { Logger } from "../lib/log.js";
import { fillHeaderTemplate, type Placeholder, type PlaceholderValues } from "../model/placeholders.js";
import type { EgressCa } from "./egress-ca.js";
import type { NewDecision } from "./egress-log.js";
import { type OutboundConnect, outboundConnector } from "./outbound.js";
import {
  isHeaderValue,
  matchTransform,
  replaceHeaders,
  type Transforms,
  wildcardOwnsHost,
} from "./transforms.js";

export interface HeaderTransformerOptions {
  ca: EgressCa;
  /** CAs (PEM) trusted for origins besides the system's (the operator's `--egress-ca`). */
  trusted: readonly string[];
  placeholders: PlaceholderValues;
  /** The team a sandbox belongs to (whose secrets its placeholders name). */
  teamOf(sandboxId: string): Promise<string | undefined>;
  /** A sandbox's rules now: read at each request, so a `PUT /network` applies to the next one. */
  transformsOf(sandboxId: string): Transforms | undefined;
  record(decision: NewDecision): void;
  /** How connections to origins are opened (marked for the firewall); plain sockets by default. */
  connect?: OutboundConnect;
  log: Logger;
}

/** One intercepted connection: a sandbox's, to a name with a rule, let out to `ip`. */
export interface Interception {
  sandboxId: string;
  /** The name the connection is for (SNI or Host): what the upstream is dialled and verified as. */
  name: string;
  /** The public address of `name` (the platform's resolvers) the decision let out. */
  ip: string;
  /** The port the sandbox connected to (and the upstream is dialled on). */
  port: number;
  /** TLS both ways (port 443), else plain HTTP (port 80). */
  tls: boolean;
  /** The decision log's fields for this connection. */
  base: Omit<NewDecision, "verdict" | "rule">;
  /**
   * A TCP connection to the upstream through the sandbox's own SOCKS5 proxy (TLS is then
   * spoken over it); without it, `ip` is dialled directly.
   */
  tunnel?: () => Promise<net.Socket>;
}

/** Why a request is not sent: in the rule for `domain`, the value of `header` has `what`. */
interface Refusal {
  domain: string;
  header: string;
  what: string;
}

interface Connection extends Interception {
  agent: http.Agent;
  dial(): Promise<net.Socket>;
  teamId: Promise<string | undefined>;
}

/** The proxy's own answers say who answered, so nobody mistakes them for the origin's. */
const SERVER = "x-egress-proxy";

/**
 * The egress proxy's man in the middle, for names with header transforms only: it terminates
 * the sandbox's TLS with a certificate of the egress CA for the name, connects to the name
 * itself with normal verification (system store plus the operator's CAs), and forwards each
 * HTTP/1.1 request of the connection (ALPN offers only http/1.1) with the rule's headers set,
 * placeholders filled at that moment. A placeholder without a value fails closed: the proxy
 * answers 502 naming the placeholder, the request is not sent, and the decision log says so.
 */
export class HeaderTransformer {
  /** Never listens: intercepted connections are handed to it one by one. */
  private readonly server: http.Server;
  private readonly connections = new WeakMap<object, Connection>();
  private readonly connect: OutboundConnect;

  constructor(private readonly o: HeaderTransformerOptions) {
    this.connect = o.connect ?? outboundConnector();
    this.server = http.createServer({ keepAlive: true }, (req, res) => {
      const conn = this.connections.get(req.socket);
      if (conn) this.forward(req, res, conn).catch((err: unknown) => this.failed(err, conn, res));
      else res.destroy();
    });
    this.server.on("clientError", (_err, socket) => socket.destroy());
    this.server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
      const conn = this.connections.get(req.socket);
      if (conn) this.upgrade(req, socket, head, conn).catch((err: unknown) => this.failed(err, conn, socket));
      else socket.destroy();
    });
  }

  async serve(client: net.Socket, first: Buffer, c: Interception): Promise<void> {
    const stream = replay(client, first);
    let socket: Duplex = stream;
    if (c.tls) {
      let context: tls.SecureContext;
      try {
        context = await this.o.ca.contextFor(c.name);
      } catch (err) {
        this.o.log.warn(
          { err, sandboxId: c.sandboxId, name: c.name },
          "no certificate for an intercepted name",
        );
        client.resetAndDestroy();
        return;
      }
      const secure = new tls.TLSSocket(stream, {
        isServer: true,
        secureContext: context,
        ALPNProtocols: ["http/1.1"],
      });
      secure.on("error", () => secure.destroy());
      socket = secure;
    }
    const dial = async (): Promise<net.Socket> => {
      const socket = c.tunnel ? await c.tunnel() : this.connect(c.ip, c.port);
      return c.tls
        ? tls.connect({
            socket,
            servername: c.name,
            ALPNProtocols: ["http/1.1"],
            ...(this.o.trusted.length > 0 ? { ca: [...tls.rootCertificates, ...this.o.trusted] } : {}),
          })
        : socket;
    };
    // one upstream connection at a time per sandbox connection, kept alive between requests
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    // the agent takes a connection from the callback when none is returned
    (
      agent as unknown as {
        createConnection: (
          opts: unknown,
          done: (err: Error | null, socket?: net.Socket) => void,
        ) => undefined;
      }
    ).createConnection = (_opts, done) => {
      dial().then(
        (socket) => done(null, socket),
        (err: Error) => done(err),
      );
      return undefined;
    };
    socket.once("close", () => agent.destroy());
    this.connections.set(socket, {
      ...c,
      agent,
      dial,
      teamId: this.o.teamOf(c.sandboxId).catch(() => undefined),
    });
    this.server.emit("connection", socket);
  }

  /** A request that failed in the proxy itself: logged, its connection closed. */
  private failed(err: unknown, c: Interception, stream: { destroy(): void }): void {
    this.o.log.warn(
      { err, sandboxId: c.sandboxId, name: c.name },
      "an intercepted request failed in the proxy",
    );
    stream.destroy();
  }

  /**
   * The rule's headers for a request now, filled; or why the request is not sent: a
   * placeholder without a value (or whose value could not be read), or a value that is not a
   * valid header value. The reason names the placeholder and the header, never a value.
   */
  private async headersNow(c: Connection): Promise<{ set: Array<[string, string]> } | { refused: Refusal }> {
    const rule = matchTransform(this.o.transformsOf(c.sandboxId), c.name);
    const set: Array<[string, string]> = [];
    if (!rule) return { set };
    // credentials only where they cannot be read on the way, nor by a stranger's site
    for (const h of rule.headers) {
      const p = h.value.find((part): part is Placeholder => typeof part !== "string");
      if (!p) continue;
      const refused = (what: string) => ({ refused: { domain: rule.domain, header: h.name, what } });
      if (!c.tls && !rule.allowPlainHttp)
        return refused(
          `${placeholderText(p)}, which is never sent over plain HTTP unless the rule sets allowPlainHttp`,
        );
      if (rule.domain.startsWith("*.") && !wildcardOwnsHost(rule.domain.slice(2), c.name))
        return refused(
          `${placeholderText(p)}, which is not sent to ${c.name}: a site registered under a public suffix the wildcard covers`,
        );
    }
    const team = (await c.teamId) ?? "";
    for (const h of rule.headers) {
      const refused = (what: string) => ({ refused: { domain: rule.domain, header: h.name, what } });
      let filled: Awaited<ReturnType<typeof fillHeaderTemplate>>;
      try {
        filled = await fillHeaderTemplate(h.value, team, c.sandboxId, this.o.placeholders);
      } catch (err) {
        this.o.log.warn(
          { err, sandboxId: c.sandboxId, header: h.name },
          "a placeholder's value could not be read",
        );
        return refused("a placeholder whose value could not be read");
      }
      if ("missing" in filled) return refused(`no value for ${placeholderText(filled.missing)}`);
      if (!isHeaderValue(filled.value)) return refused("a value that is not a valid header value");
      set.push([h.name, filled.value]);
    }
    return { set };
  }

  /** Records a request not sent, and the proxy's answer to it. */
  private refusal(c: Interception, r: Refusal): { status: number; body: string } {
    this.o.record({
      ...c.base,
      verdict: "denied",
      rule: `transform ${r.domain}: ${r.what} (header ${r.header}); request not sent`,
    });
    return {
      status: 502,
      body: `x egress proxy: the header transform for ${r.domain} has ${r.what} (header ${r.header}); the request was not sent.\n`,
    };
  }

  private async forward(req: http.IncomingMessage, res: http.ServerResponse, c: Connection): Promise<void> {
    const headers = await this.headersNow(c);
    if ("refused" in headers) {
      const { status, body } = this.refusal(c, headers.refused);
      req.resume();
      res.writeHead(status, {
        "content-type": "text/plain; charset=utf-8",
        server: SERVER,
        connection: "close",
      });
      res.end(body);
      return;
    }
    const upstream = http.request(
      {
        agent: c.agent,
        method: req.method,
        path: req.url,
        headers: replaceHeaders(req.rawHeaders, headers.set),
        setHost: false,
      },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.statusMessage, answer.rawHeaders);
        answer.pipe(res);
        answer.once("error", () => res.destroy());
      },
    );
    upstream.once("error", (err: NodeJS.ErrnoException) => {
      this.o.log.debug({ err, sandboxId: c.sandboxId, name: c.name }, "intercepted request failed upstream");
      if (res.headersSent) return void res.destroy();
      res.writeHead(502, {
        "content-type": "text/plain; charset=utf-8",
        server: SERVER,
        connection: "close",
      });
      res.end(`x egress proxy: ${c.name} could not be reached (${err.code ?? err.message}).\n`);
    });
    req.pipe(upstream);
  }

  /** A request that upgrades (a WebSocket): its head rewritten, then bytes both ways. */
  private async upgrade(
    req: http.IncomingMessage,
    socket: Duplex,
    head: Buffer,
    c: Connection,
  ): Promise<void> {
    const headers = await this.headersNow(c);
    if ("refused" in headers) {
      const { status, body } = this.refusal(c, headers.refused);
      socket.end(
        `HTTP/1.1 ${status} Bad Gateway\r\ncontent-type: text/plain; charset=utf-8\r\nserver: ${SERVER}\r\nconnection: close\r\ncontent-length: ${Buffer.byteLength(body)}\r\n\r\n${body}`,
      );
      return;
    }
    const raw = replaceHeaders(req.rawHeaders, headers.set);
    const lines = [`${req.method} ${req.url} HTTP/1.1`];
    for (let i = 0; i + 1 < raw.length; i += 2) lines.push(`${raw[i]}: ${raw[i + 1]}`);
    let upstream: net.Socket;
    try {
      upstream = await c.dial();
    } catch {
      socket.destroy();
      return;
    }
    upstream.on("error", () => socket.destroy());
    socket.on("error", () => upstream.destroy());
    upstream.write(`${lines.join("\r\n")}\r\n\r\n`);
    if (head.length > 0) upstream.write(head);
    upstream.pipe(socket);
    socket.pipe(upstream);
    socket.once("close", () => upstream.destroy());
    upstream.once("close", () => socket.destroy());
  }
}

/** A placeholder as written in a rule (its name only, never a value). */
function placeholderText(p: Placeholder): string {
  return `\${e2b.${p.kind === "secret" ? "secrets" : "identity.tokens"}.${p.name}}`;
}

/**
 * The client's connection as a stream that gives `first` (the bytes read to name the
 * connection) again before the rest: TLS and HTTP parsers read a socket's handle directly and
 * would miss what was read already.
 */
function replay(client: net.Socket, first: Buffer): Duplex {
  const stream = new Duplex({
    read() {
      client.resume();
    },
    write(chunk: Buffer, _encoding, callback) {
      // a sandbox that went away takes the rest (a TLS close_notify, say) with it
      if (client.destroyed || client.writableEnded) return callback();
      client.write(chunk, () => callback());
    },
    final(callback) {
      client.end();
      callback();
    },
    destroy(err, callback) {
      client.destroy();
      callback(err);
    },
  });
  stream.on("error", () => stream.destroy());
  if (first.length > 0) stream.push(first);
  client.on("data", (chunk: Buffer) => {
    if (!stream.push(chunk)) client.pause();
  });
  client.once("end", () => stream.push(null));
  client.once("close", () => stream.destroy());
  // what http's server calls on a socket
  Object.assign(stream, {
    setTimeout: () => stream,
    setNoDelay: () => stream,
    setKeepAlive: () => stream,
    remoteAddress: client.remoteAddress,
    remotePort: client.remotePort,
  });
  return stream;
}
