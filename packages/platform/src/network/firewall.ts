import { CommandError, command } from "../runtime/command.js";

/**
 * The host-side policy for all sandboxes, one nftables table owned by the platform:
 * - a sandbox reaches neither the host's own services (input) nor another sandbox (forward);
 * - the host may connect into a sandbox (its replies pass as established);
 * - outbound internet is allowed per sandbox by the `internet` set of (host veth, sandbox IP)
 *   pairs, which also stops a sandbox spoofing another's address, and is masqueraded.
 * Refusals reject (TCP reset, ICMP otherwise), so a blocked connection fails at once.
 * The rules match host veths by name prefix, so they never touch traffic that is not ours.
 */
export class Firewall {
  constructor(
    /** nftables table name in the inet family. */
    readonly table: string,
    /** Name prefix of every host-side veth, e.g. `xh`. */
    readonly hostIfPrefix: string,
  ) {}

  /** Creates or refreshes the table atomically, keeping the internet set's elements. */
  async install(): Promise<void> {
    const t = `inet ${this.table}`;
    const veth = `"${this.hostIfPrefix}*"`;
    const script = [
      `add table ${t}`,
      `add set ${t} internet { type ifname . ipv4_addr; }`,
      // TCP gets a reset: gVisor ignores ICMP unreachable on connect and would wait for a timeout
      `add chain ${t} refuse`,
      `flush chain ${t} refuse`,
      `add rule ${t} refuse meta l4proto tcp reject with tcp reset`,
      `add rule ${t} refuse reject`,
      `add chain ${t} input { type filter hook input priority filter; policy accept; }`,
      `flush chain ${t} input`,
      `add rule ${t} input iifname ${veth} ct state established,related accept`,
      `add rule ${t} input iifname ${veth} jump refuse`,
      `add chain ${t} forward { type filter hook forward priority filter; policy accept; }`,
      `flush chain ${t} forward`,
      `add rule ${t} forward iifname ${veth} oifname ${veth} jump refuse`,
      `add rule ${t} forward oifname ${veth} ct state established,related accept`,
      `add rule ${t} forward oifname ${veth} jump refuse`,
      `add rule ${t} forward iifname . ip saddr @internet accept`,
      `add rule ${t} forward iifname ${veth} jump refuse`,
      `add chain ${t} postrouting { type nat hook postrouting priority srcnat; policy accept; }`,
      `flush chain ${t} postrouting`,
      `add rule ${t} postrouting iifname ${veth} oifname != ${veth} masquerade`,
    ].join("\n");
    await command("nft", ["-f", "-"], { input: script });
    // forwarding is host-wide; NAT for sandboxes cannot work without it
    await command("sysctl", ["-q", "-w", "net.ipv4.ip_forward=1"]);
  }

  async setInternet(hostIf: string, sandboxIp: string, allowed: boolean): Promise<void> {
    const element = `{ "${hostIf}" . ${sandboxIp} }`;
    const add = `add element inet ${this.table} internet ${element}`;
    // nft 1.0.6 has no "destroy": deleting a missing element fails, so removal adds it first
    // in the same transaction, which makes both directions idempotent
    const script = allowed ? add : `${add}\ndelete element inet ${this.table} internet ${element}`;
    await command("nft", ["-f", "-"], { input: script });
  }

  /** The (host veth, sandbox IP) pairs currently allowed out. */
  async internetAllowed(): Promise<Array<{ hostIf: string; sandboxIp: string }>> {
    const out = await command("nft", ["-j", "list", "set", "inet", this.table, "internet"]);
    const parsed = JSON.parse(out) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
    const elems = parsed.nftables.find((x) => x.set)?.set?.elem ?? [];
    return elems.map((e) => {
      const [hostIf, sandboxIp] = (e as { concat: [string, string] }).concat;
      return { hostIf, sandboxIp };
    });
  }

  /** The ruleset as nft prints it, for diagnostics and tests; null when the table is absent. */
  async describe(): Promise<string | null> {
    try {
      return await command("nft", ["list", "table", "inet", this.table]);
    } catch (err) {
      if (err instanceof CommandError) return null;
      throw err;
    }
  }

  async remove(): Promise<void> {
    if ((await this.describe()) !== null) await command("nft", ["delete", "table", "inet", this.table]);
  }
}
