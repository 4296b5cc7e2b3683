import dgram from "node:dgram";
import dnsPacket from "dns-packet";
import type { Logger } from "../lib/log.js";
import { decodeQuery, errorReply } from "./dns-forwarder.js";

/** The address clients reach a server listening on `host` at: loopback for a wildcard listener. */
export function reachableAddress(host: string): string {
  return host === "0.0.0.0" || host === "::" ? "127.0.0.1" : host;
}

/**
 * An optional DNS listener for the sandbox domain: A queries for `{domain}` and any name under
 * it are answered with the proxy's address, so a machine that uses it as resolver opens the
 * URLs the client builds (`sandbox.getHost(port)`) as they are. Other names are REFUSED: it is
 * no general resolver.
 */
export class DomainDns {
  private socket?: dgram.Socket;

  constructor(private readonly o: { domain: string; address: string; log: Logger; ttlSeconds?: number }) {}

  /** Listens on UDP; resolves with the bound port. */
  async listen(port: number, host: string): Promise<number> {
    const socket = dgram.createSocket(host.includes(":") ? "udp6" : "udp4");
    await new Promise<void>((resolve, reject) => {
      socket.once("error", reject);
      socket.bind(port, host, () => {
        socket.off("error", reject);
        resolve();
      });
    });
    socket.on("error", (err) => this.o.log.warn({ err }, "domain DNS socket error"));
    socket.on("message", (msg, rinfo) => {
      const reply = this.answer(msg);
      if (reply) socket.send(reply, rinfo.port, rinfo.address);
    });
    this.socket = socket;
    return socket.address().port;
  }

  close(): void {
    this.socket?.close();
  }

  /** The reply to one query; undefined for what is not a query. */
  answer(query: Buffer): Buffer | undefined {
    const packet = decodeQuery(query);
    if (!packet) return undefined;
    const domain = this.o.domain.toLowerCase();
    const questions = packet.questions ?? [];
    const ours = questions.every((q) => {
      const name = q.name.toLowerCase().replace(/\.$/, "");
      return name === domain || name.endsWith(`.${domain}`);
    });
    if (!ours || questions.length === 0) return errorReply(packet, "REFUSED");
    const flags = ((packet.flags ?? 0) & dnsPacket.RECURSION_DESIRED) | dnsPacket.AUTHORITATIVE_ANSWER;
    return dnsPacket.encode({
      id: packet.id,
      type: "response",
      flags,
      questions,
      answers: questions
        .filter((q) => q.type === "A")
        .map((q) => ({
          type: "A" as const,
          name: q.name,
          ttl: this.o.ttlSeconds ?? 60,
          data: this.o.address,
        })),
    });
  }
}
