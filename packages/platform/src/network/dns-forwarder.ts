import { randomInt } from "node:crypto";
import dgram from "node:dgram";
import { readFile } from "node:fs/promises";
import net from "node:net";
import dnsPacket from "dns-packet";
import type { Logger } from "../lib/log.js";

/** Where queries go: an IPv4 or IPv6 address, with a port (53 when absent). */
export interface Upstream {
  host: string;
  port: number;
}

/** Per-client policy: which names a sandbox may have resolved, and what it was told. */
export interface DnsGate {
  /** Whether this client may resolve this name (the gate logs its own decision). */
  admit(clientIp: string, name: string): boolean;
  /**
   * Why an address in an answer must not be given to this client (an address it may never
   * reach: the host's internal names stay unknown to sandboxes), or undefined.
   */
  withhold?(clientIp: string, name: string, address: string): string | undefined;
  /** The IPv4 answers a client got for an admitted name. */
  answered(
    clientIp: string,
    name: string,
    addresses: Array<{ ip: string; ttlSeconds: number }>,
  ): Promise<void>;
}

export interface DnsForwarderOptions {
  upstreams: readonly Upstream[];
  log: Logger;
  gate?: DnsGate;
  /** How long one upstream may take before the next is asked. Default 2000. */
  timeoutMs?: number;
}

/**
 * `1.2.3.4`, `1.2.3.4:5353`, `[::1]:53` or `::1` (port 53 when none is given); throws on
 * anything else. A listening address (`listen`) may name port 0: any free one.
 */
export function parseUpstream(text: string, o: { listen?: boolean } = {}): Upstream {
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const hostPort = /^([^:]+):(\d+)$/.exec(text);
  const [host, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : hostPort
      ? [hostPort[1]!, hostPort[2]]
      : [text, undefined];
  const n = port === undefined ? 53 : Number(port);
  if (net.isIP(host) === 0 || !Number.isInteger(n) || n < (o.listen ? 0 : 1) || n > 65535) {
    throw new Error(
      `a DNS ${o.listen ? "listening address" : "upstream"} must be IP or IP:PORT, got "${text}"`,
    );
  }
  return { host, port: n };
}

/** The resolvers this host uses (`nameserver` lines of resolv.conf), for sandboxes to use too. */
export async function hostResolvers(file = "/etc/resolv.conf"): Promise<Upstream[]> {
  const text = await readFile(file, "utf8").catch(() => "");
  return text
    .split("\n")
    .map((line) => /^\s*nameserver\s+(\S+)/.exec(line)?.[1])
    .filter((ip): ip is string => ip !== undefined && net.isIP(ip) !== 0)
    .map((host) => ({ host, port: 53 }));
}

interface Pending {
  upstream: Upstream;
  resolve(answer: Buffer): void;
  timer: NodeJS.Timeout;
}

/**
 * The platform's DNS service for sandboxes: every query a sandbox sends to port 53 (UDP or
 * TCP, whatever address it named) is redirected here by the firewall and forwarded to the
 * configured upstream resolvers, so sandboxes never talk to the host's or the operator's
 * internal resolvers themselves. Queries travel as they came (only their id is rewritten);
 * answers go back unchanged. Without upstreams, or when none answers, the answer is REFUSED
 * or SERVFAIL at once, never silence.
 */
export class DnsForwarder {
  private udp?: dgram.Socket;
  private tcp?: net.Server;
  private readonly upstreamUdp = new Map<4 | 6, dgram.Socket>();
  private readonly pending = new Map<number, Pending>();
  private readonly clients = new Set<net.Socket>();
  private readonly timeoutMs: number;

  constructor(private readonly o: DnsForwarderOptions) {
    this.timeoutMs = o.timeoutMs ?? 2000;
  }

  /** Listens on UDP and TCP on the same port (any free one for 0); returns the port. */
  async listen(port = 0, host = "0.0.0.0"): Promise<number> {
    for (let attempt = 0; ; attempt++) {
      const udp = dgram.createSocket({ type: net.isIPv6(host) ? "udp6" : "udp4" });
      const bound = await new Promise<number>((resolve, reject) => {
        udp.once("error", reject);
        udp.bind(port, host, () => resolve(udp.address().port));
      });
      const tcp = net.createServer((socket) => this.serveTcp(socket));
      const ok = await new Promise<boolean>((resolve, reject) => {
        tcp.once("error", (err: NodeJS.ErrnoException) =>
          err.code === "EADDRINUSE" && port === 0 && attempt < 5 ? resolve(false) : reject(err),
        );
        tcp.listen(bound, host, () => resolve(true));
      });
      if (!ok) {
        udp.close();
        continue;
      }
      udp.on("message", (msg, rinfo) => {
        void this.answer(msg, "udp", rinfo.address).then((reply) => {
          if (reply) udp.send(reply, rinfo.port, rinfo.address);
        });
      });
      udp.on("error", (err) => this.o.log.warn({ err }, "DNS socket error"));
      this.udp = udp;
      this.tcp = tcp;
      return bound;
    }
  }

  async close(): Promise<void> {
    for (const p of this.pending.values()) clearTimeout(p.timer);
    this.pending.clear();
    for (const socket of this.clients) socket.destroy();
    for (const socket of this.upstreamUdp.values()) socket.close();
    this.upstreamUdp.clear();
    this.udp?.close();
    await new Promise<void>((resolve) => (this.tcp ? this.tcp.close(() => resolve()) : resolve()));
  }

  /**
   * IPv4 addresses of a name, asked of the upstreams (for the egress proxy, which dials allowed
   * names itself). Rejects when no upstream answers or the name has none.
   */
  async resolve4(name: string): Promise<string[]> {
    const query = dnsPacket.encode({
      type: "query",
      id: 0,
      flags: dnsPacket.RECURSION_DESIRED,
      questions: [{ type: "A", name }],
    });
    const reply = await this.forward(query, "udp");
    const answers = aRecords(dnsPacket.decode(reply));
    if (answers.length === 0) throw new Error(`${name} has no IPv4 address`);
    return answers.map((a) => a.ip);
  }

  /** The reply to one query, or undefined for what is not a DNS query at all (dropped). */
  private async answer(query: Buffer, via: "udp" | "tcp", client: string): Promise<Buffer | undefined> {
    const packet = decodeQuery(query);
    if (!packet) return undefined;
    const gate = this.o.gate;
    const names = (packet.questions ?? []).map((q) => q.name);
    if (gate && !names.every((name) => gate.admit(client, name))) return errorReply(packet, "REFUSED");
    if (this.o.upstreams.length === 0) return errorReply(packet, "REFUSED");
    try {
      let reply = await this.forward(query, via);
      if (gate?.withhold) reply = withheld(reply, (name, ip) => gate.withhold!(client, name, ip));
      if (gate && names.length === 1) {
        const addresses = aRecords(dnsPacket.decode(reply));
        // before the answer goes out: the sandbox may connect the moment it has it
        if (addresses.length > 0) await gate.answered(client, names[0]!, addresses);
      }
      return reply;
    } catch {
      return errorReply(packet, "SERVFAIL");
    }
  }

  /** The first upstream answer to a query; rejects when none answers. */
  private async forward(query: Buffer, via: "udp" | "tcp"): Promise<Buffer> {
    if (this.o.upstreams.length === 0) throw new Error("no DNS upstream is configured");
    for (const upstream of this.o.upstreams) {
      try {
        return await (via === "udp" ? this.viaUdp(query, upstream) : this.viaTcp(query, upstream));
      } catch (err) {
        this.o.log.debug(
          {
            upstream: `${upstream.host}:${upstream.port}`,
            err: err instanceof Error ? err.message : String(err),
          },
          "DNS upstream failed",
        );
      }
    }
    throw new Error("no DNS upstream answered");
  }

  private viaUdp(query: Buffer, upstream: Upstream): Promise<Buffer> {
    const family = net.isIPv6(upstream.host) ? 6 : 4;
    let socket = this.upstreamUdp.get(family);
    if (!socket) {
      socket = dgram.createSocket(family === 6 ? "udp6" : "udp4");
      socket.on("message", (msg, rinfo) => this.fromUpstream(msg, rinfo));
      socket.on("error", (err) => this.o.log.warn({ err }, "DNS upstream socket error"));
      this.upstreamUdp.set(family, socket);
    }
    const originalId = query.readUInt16BE(0);
    const id = this.freeId();
    const forwarded = Buffer.from(query);
    forwarded.writeUInt16BE(id, 0);
    return new Promise<Buffer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        reject(new Error(`no answer within ${this.timeoutMs} ms`));
      }, this.timeoutMs);
      this.pending.set(id, {
        upstream,
        timer,
        resolve: (answer) => {
          answer.writeUInt16BE(originalId, 0);
          resolve(answer);
        },
      });
      socket.send(forwarded, upstream.port, upstream.host, (err) => {
        if (!err) return;
        clearTimeout(timer);
        this.pending.delete(id);
        reject(err);
      });
    });
  }

  private fromUpstream(msg: Buffer, rinfo: dgram.RemoteInfo): void {
    if (msg.length < 12) return;
    const pending = this.pending.get(msg.readUInt16BE(0));
    // only the upstream the query went to may answer it
    if (!pending || pending.upstream.host !== rinfo.address || pending.upstream.port !== rinfo.port) return;
    this.pending.delete(msg.readUInt16BE(0));
    clearTimeout(pending.timer);
    pending.resolve(msg);
  }

  private freeId(): number {
    for (;;) {
      const id = randomInt(0, 65536);
      if (!this.pending.has(id)) return id;
    }
  }

  private viaTcp(query: Buffer, upstream: Upstream): Promise<Buffer> {
    return new Promise<Buffer>((resolve, reject) => {
      const socket = net.connect({ host: upstream.host, port: upstream.port });
      socket.setTimeout(this.timeoutMs, () =>
        socket.destroy(new Error(`no answer within ${this.timeoutMs} ms`)),
      );
      readFrames(socket, (frame) => {
        socket.end();
        resolve(frame);
      });
      socket.once("error", reject);
      socket.once("close", () => reject(new Error("the upstream closed the connection")));
      socket.write(frame(query));
    });
  }

  /** DNS over TCP: length-prefixed queries, answered in order of arrival. */
  private serveTcp(socket: net.Socket): void {
    this.clients.add(socket);
    socket.once("close", () => this.clients.delete(socket));
    socket.on("error", () => socket.destroy());
    socket.setTimeout(30_000, () => socket.destroy());
    let queue = Promise.resolve();
    readFrames(socket, (query) => {
      queue = queue.then(async () => {
        const reply = await this.answer(query, "tcp", socket.remoteAddress?.replace(/^::ffff:/, "") ?? "");
        if (reply && !socket.destroyed) socket.write(frame(reply));
        else if (!reply) socket.destroy();
      });
    });
  }
}

function frame(message: Buffer): Buffer {
  const length = Buffer.alloc(2);
  length.writeUInt16BE(message.length, 0);
  return Buffer.concat([length, message]);
}

/** Calls `onFrame` for every length-prefixed message arriving on a TCP stream. */
function readFrames(socket: net.Socket, onFrame: (message: Buffer) => void): void {
  let buffered = Buffer.alloc(0);
  socket.on("data", (chunk: Buffer) => {
    buffered = Buffer.concat([buffered, chunk]);
    while (buffered.length >= 2) {
      const length = buffered.readUInt16BE(0);
      if (buffered.length < 2 + length) break;
      onFrame(buffered.subarray(2, 2 + length));
      buffered = buffered.subarray(2 + length);
    }
  });
}

/** Response codes (RFC 1035 4.1.1) of the answers this service makes itself. */
const RCODE = { SERVFAIL: 2, REFUSED: 5 } as const;

/** A DNS query decoded, or undefined for bytes that are not one. */
export function decodeQuery(bytes: Buffer): dnsPacket.Packet | undefined {
  try {
    const packet = dnsPacket.decode(bytes);
    return packet.type === "query" ? packet : undefined;
  } catch {
    return undefined;
  }
}

/** An answer that carries only a response code, for the question asked. */
export function errorReply(query: dnsPacket.Packet, rcode: keyof typeof RCODE): Buffer {
  return dnsPacket.encode({
    id: query.id,
    type: "response",
    flags: ((query.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | dnsPacket.RECURSION_AVAILABLE | RCODE[rcode],
    questions: query.questions,
  });
}

/**
 * An answer without the A and AAAA records `hide` says no; the bytes as they came when it keeps
 * them all (or they do not decode: they are passed on as they were, for the client to judge).
 */
export function withheld(reply: Buffer, hide: (name: string, ip: string) => string | undefined): Buffer {
  let packet: dnsPacket.Packet;
  try {
    packet = dnsPacket.decode(reply);
  } catch {
    return reply;
  }
  const answers = packet.answers ?? [];
  const kept = answers.filter(
    (a) => !((a.type === "A" || a.type === "AAAA") && hide(a.name, (a as dnsPacket.StringAnswer).data)),
  );
  if (kept.length === answers.length) return reply;
  return dnsPacket.encode({ ...packet, answers: kept });
}

/** The A records of an answer, with their TTLs (a CNAME chain's end included). */
function aRecords(reply: dnsPacket.Packet): Array<{ ip: string; ttlSeconds: number }> {
  return (reply.answers ?? [])
    .filter((a): a is dnsPacket.StringAnswer => a.type === "A")
    .map((a) => ({ ip: a.data, ttlSeconds: a.ttl ?? 0 }));
}
