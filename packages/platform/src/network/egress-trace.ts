import type { ChildProcess } from "node:child_process";
import readline from "node:readline";
import type { Logger } from "../lib/log.js";
import { type ChildRecords, spawnOwned } from "../lib/owned-process.js";
import type { NewDecision } from "./egress-log.js";
import { addressVerdict, type EgressRules } from "./egress-rules.js";
import { RULE_COMMENT } from "./firewall.js";

export interface EgressTraceOptions {
  /** The platform's nftables table (inet family). */
  table: string;
  egressAt(ip: string): { id: string; rules: EgressRules } | undefined;
  record(decision: NewDecision): void;
  /** The reader is recorded here, for the next start to end it if it outlived a killed platform. */
  children?: ChildRecords;
  log: Logger;
}

interface TracedPacket {
  saddr: string;
  daddr: string;
  protocol: NewDecision["protocol"];
  dport?: number;
}

/** Traces whose deciding rule has not been seen yet; a bound on what a lost line can leave. */
const MAX_PENDING = 1000;

/**
 * The verdicts the kernel's firewall gives sandboxes' new connections, for the decision log:
 * `nft monitor trace` reports each traced packet (the firewall traces the first packet of a
 * sandbox's connections) and every rule it met; the rule carrying one of our comments
 * (RULE_COMMENT) is the decision. Connections sent to the egress proxy are logged by the proxy.
 */
export class EgressTrace {
  private child?: ChildProcess;
  private closed = false;
  private readonly pending = new Map<string, TracedPacket>();

  constructor(private readonly o: EgressTraceOptions) {}

  start(): void {
    if (this.closed) return;
    // nft's output to a pipe is block-buffered: stdbuf makes it line by line, as it happens.
    // It dies with the platform, however that ends (spawnOwned).
    const child = spawnOwned(
      "stdbuf",
      ["-oL", "nft", "monitor", "trace"],
      { stdio: ["ignore", "pipe", "pipe"] },
      this.o.children,
    );
    this.child = child;
    readline.createInterface({ input: child.stdout! }).on("line", (line) => this.read(line));
    child.stderr!.resume();
    child.once("error", (err) => this.o.log.warn({ err }, "could not read the firewall's trace"));
    child.once("exit", (code) => {
      if (this.closed) return;
      this.o.log.warn({ code }, "the firewall trace reader ended; restarting it");
      setTimeout(() => this.start(), 1000).unref();
    });
  }

  close(): void {
    this.closed = true;
    this.child?.kill();
  }

  /** One line of `nft monitor trace`. */
  read(line: string): void {
    const m =
      /^trace id (\w+) inet (\S+) \S+ (packet|rule): (.*)$|^trace id (\w+) inet (\S+) \S+ rule (.*)$/.exec(
        line,
      );
    if (!m) return;
    const [id, table, kind, rest] = m[1] ? [m[1], m[2], m[3], m[4]!] : [m[5], m[6], "rule", m[7]!];
    if (table !== this.o.table || !id) return;
    if (kind === "packet") {
      const packet = parsePacket(rest);
      if (!packet) return;
      this.pending.set(id, packet);
      if (this.pending.size > MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
      return;
    }
    const comment = /comment "(x:[^"]+)"/.exec(rest)?.[1];
    const packet = this.pending.get(id);
    if (!comment || !packet) return;
    this.pending.delete(id);
    // the egress proxy and the DNS service log their own decisions
    if (comment === RULE_COMMENT.toProxy || comment === RULE_COMMENT.dns) return;
    const sandbox = this.o.egressAt(packet.saddr);
    if (!sandbox) return;
    const base = {
      sandboxId: sandbox.id,
      protocol: packet.protocol,
      destination: packet.daddr,
      ...(packet.dport !== undefined ? { port: packet.dport } : {}),
    };
    if (comment === RULE_COMMENT.private || comment === RULE_COMMENT.spoofed) {
      const rule = comment === RULE_COMMENT.private ? "private range (always denied)" : "spoofed source";
      this.o.record({ ...base, verdict: "denied", rule });
      return;
    }
    const { rule } = addressVerdict(sandbox.rules, packet.daddr);
    this.o.record({ ...base, verdict: comment === RULE_COMMENT.denyOut ? "denied" : "allowed", rule });
  }
}

function parsePacket(text: string): TracedPacket | undefined {
  const saddr = /\bip saddr (\S+)/.exec(text)?.[1];
  const daddr = /\bip daddr (\S+)/.exec(text)?.[1];
  if (!saddr || !daddr) return undefined;
  const proto = /\bip protocol (\w+)/.exec(text)?.[1];
  const protocol = proto === "tcp" || proto === "udp" || proto === "icmp" ? proto : "other";
  const dport = /\b(?:tcp|udp) dport (\d+)/.exec(text)?.[1];
  return { saddr, daddr, protocol, ...(dport ? { dport: Number(dport) } : {}) };
}
