/** One egress decision about a sandbox's traffic, as the decision log keeps it. */
export interface EgressDecision {
  /** Increasing per platform: the cursor for reading on. */
  seq: number;
  time: string;
  sandboxId: string;
  /** `dns` for a name lookup, else the connection's protocol. */
  protocol: "tcp" | "udp" | "icmp" | "dns" | "other";
  /** The address the sandbox sent to (absent for DNS). */
  destination?: string;
  /** The host name: asked for (DNS), named in the connection (SNI, Host) or resolved before. */
  name?: string;
  port?: number;
  verdict: "allowed" | "denied";
  /** What decided, e.g. `allowOut 198.51.100.0/24`, `denyOut 0.0.0.0/0`, `private range`. */
  rule: string;
}

export type NewDecision = Omit<EgressDecision, "seq" | "time">;

/**
 * The newest egress decisions of each sandbox, in memory (`perSandbox` each, for the
 * `maxSandboxes` heard from most recently: a sandbox's log outlives a pause that stops it),
 * with running totals by verdict and protocol for /metrics.
 */
export class EgressLog {
  private readonly bySandbox = new Map<string, EgressDecision[]>();
  private seq = 0;
  /** Decisions so far by `verdict protocol`. */
  private readonly totals = new Map<string, number>();

  constructor(
    private readonly perSandbox = 1000,
    /** Sandboxes whose decisions are kept; the one heard from least recently goes first. */
    private readonly maxSandboxes = 1000,
  ) {}

  record(d: NewDecision): void {
    const decision: EgressDecision = { seq: ++this.seq, time: new Date().toISOString(), ...d };
    const list = this.bySandbox.get(d.sandboxId) ?? [];
    // most recently heard from last, so the first is the one to let go
    this.bySandbox.delete(d.sandboxId);
    this.bySandbox.set(d.sandboxId, list);
    if (this.bySandbox.size > this.maxSandboxes) this.bySandbox.delete(this.bySandbox.keys().next().value!);
    list.push(decision);
    if (list.length > this.perSandbox) list.splice(0, list.length - this.perSandbox);
    const key = `${d.verdict} ${d.protocol}`;
    this.totals.set(key, (this.totals.get(key) ?? 0) + 1);
  }

  /** Decisions about a sandbox after cursor `after` (0: from the oldest kept), at most `limit`. */
  since(sandboxId: string, after = 0, limit = 100): EgressDecision[] {
    const list = this.bySandbox.get(sandboxId) ?? [];
    const first = list.findIndex((d) => d.seq > after);
    return first < 0 ? [] : list.slice(first, first + limit);
  }

  /** Decisions so far, by verdict and protocol. */
  counts(): Array<{ verdict: string; protocol: string; count: number }> {
    return [...this.totals].map(([key, count]) => {
      const [verdict = "", protocol = ""] = key.split(" ");
      return { verdict, protocol, count };
    });
  }
}
