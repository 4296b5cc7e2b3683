/**
 * Which names each sandbox had resolved by the platform's DNS service, by the addresses the
 * answers gave: the egress proxy lets a connection to such an address out by that name when
 * the client's first bytes name nothing (SSH, databases and other protocols without SNI or
 * Host). Entries live at least `minTtlMs` (programs cache answers past their TTL) and each
 * sandbox keeps at most `maxPerSandbox` addresses, oldest dropped first.
 */
export class NameMemory {
  private readonly bySandbox = new Map<string, Map<string, { name: string; expiresMs: number }>>();

  constructor(
    private readonly o: { minTtlMs?: number; maxPerSandbox?: number } = {},
    private readonly now: () => number = Date.now,
  ) {}

  /** How long answers with these TTLs are kept. */
  keepMs(addresses: Array<{ ttlSeconds: number }>): number {
    const ttl = Math.max(0, ...addresses.map((a) => a.ttlSeconds));
    return Math.max(ttl * 1000, this.o.minTtlMs ?? 300_000);
  }

  remember(sandboxId: string, name: string, addresses: Array<{ ip: string; ttlSeconds: number }>): void {
    let names = this.bySandbox.get(sandboxId);
    if (!names) {
      names = new Map();
      this.bySandbox.set(sandboxId, names);
    }
    for (const { ip, ttlSeconds } of addresses) {
      names.delete(ip);
      names.set(ip, {
        name: name.toLowerCase().replace(/\.$/, ""),
        expiresMs: this.now() + this.keepMs([{ ttlSeconds }]),
      });
    }
    const max = this.o.maxPerSandbox ?? 4096;
    for (const ip of names.keys()) {
      if (names.size <= max) break;
      names.delete(ip);
    }
  }

  /** The name this sandbox last resolved to this address, while it is remembered. */
  nameOf(sandboxId: string, ip: string): string | undefined {
    const entry = this.bySandbox.get(sandboxId)?.get(ip);
    if (!entry) return undefined;
    if (entry.expiresMs < this.now()) {
      this.bySandbox.get(sandboxId)?.delete(ip);
      return undefined;
    }
    return entry.name;
  }

  forget(sandboxId: string): void {
    this.bySandbox.delete(sandboxId);
  }
}
