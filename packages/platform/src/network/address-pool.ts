/** One sandbox's point-to-point link: a /30 whose .1 is the host end and .2 the sandbox end. */
export interface SlotAddresses {
  slot: number;
  hostIp: string;
  sandboxIp: string;
  prefixLength: 30;
}

export function ipToInt(ip: string): number {
  const parts = ip.split(".").map(Number);
  if (parts.length !== 4 || parts.some((p) => !Number.isInteger(p) || p < 0 || p > 255)) {
    throw new Error(`invalid IPv4 address: ${ip}`);
  }
  return ((parts[0]! << 24) | (parts[1]! << 16) | (parts[2]! << 8) | parts[3]!) >>> 0;
}

export function intToIp(n: number): string {
  return [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
}

/**
 * Splits a CIDR (default 10.200.0.0/16) into /30 slots. The pool holds no state of its own: which
 * slots are taken is read back from the kernel (see NetworkManager), so a restarted platform
 * derives the allocation instead of trusting a file.
 */
export class AddressPool {
  readonly base: number;
  readonly size: number;

  constructor(readonly cidr: string) {
    const [ip, len] = cidr.split("/");
    const prefix = Number(len);
    if (!ip || !Number.isInteger(prefix) || prefix < 8 || prefix > 30) {
      throw new Error(`address pool must be an IPv4 CIDR between /8 and /30, got ${cidr}`);
    }
    const mask = (~0 << (32 - prefix)) >>> 0;
    this.base = (ipToInt(ip) & mask) >>> 0;
    this.size = 2 ** (30 - prefix);
  }

  addresses(slot: number): SlotAddresses {
    if (!Number.isInteger(slot) || slot < 0 || slot >= this.size) {
      throw new Error(`slot ${slot} is outside pool ${this.cidr}`);
    }
    const net = this.base + slot * 4;
    return { slot, hostIp: intToIp(net + 1), sandboxIp: intToIp(net + 2), prefixLength: 30 };
  }

  /** The lowest slot not in `taken`; throws when the pool is exhausted. */
  firstFree(taken: ReadonlySet<number>): number {
    for (let slot = 0; slot < this.size; slot++) if (!taken.has(slot)) return slot;
    throw new Error(`address pool ${this.cidr} is exhausted (${this.size} sandboxes)`);
  }
}
