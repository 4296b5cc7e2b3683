import { CommandError, command } from "../lib/command.js";

/**
 * Destinations no sandbox may reach, whatever its own policy says: the host's and the
 * operator's internal networks, cloud metadata (169.254.169.254), loopback, CGNAT, multicast
 * and reserved space. Only the operator opens chosen ranges (`allowInternal`).
 */
export const ALWAYS_DENIED_IPV4 = [
  "0.0.0.0/8",
  "10.0.0.0/8",
  "100.64.0.0/10",
  "127.0.0.0/8",
  "169.254.0.0/16",
  "172.16.0.0/12",
  "192.168.0.0/16",
  "224.0.0.0/3",
] as const;

export interface FirewallOptions {
  /** nftables table name in the inet family. */
  table: string;
  /** Name prefix of every host-side veth, e.g. `xh`. */
  hostIfPrefix: string;
  /** Internal IPv4 ranges the operator opens to sandboxes that have internet (a package mirror, say). */
  allowInternal?: readonly string[];
}

/**
 * The host-side policy for all sandboxes, one nftables table owned by the platform:
 * - a sandbox reaches neither the host's own services (input) nor another sandbox (forward);
 * - the host may connect into a sandbox (its replies pass as established);
 * - outbound internet is allowed per sandbox by the `internet` set of (host veth, sandbox IP)
 *   pairs, which also stops a sandbox spoofing another's address, and is masqueraded; private,
 *   loopback, link-local, CGNAT and reserved destinations stay refused for every sandbox
 *   (ALWAYS_DENIED_IPV4) unless the operator opened them; IPv6 is refused (sandboxes have none);
 * - DNS (port 53, UDP and TCP, to any address) of a sandbox with internet goes to the
 *   platform's own resolver instead of wherever the sandbox sent it; without internet it is
 *   refused like any other traffic.
 * Refusals reject (TCP reset, ICMP otherwise), so a blocked connection fails at once.
 * The rules match host veths by name prefix, so they never touch traffic that is not ours.
 */
export class Firewall {
  readonly table: string;
  readonly hostIfPrefix: string;

  constructor(private readonly o: FirewallOptions) {
    this.table = o.table;
    this.hostIfPrefix = o.hostIfPrefix;
  }

  /**
   * Creates or refreshes the table atomically, keeping the internet set's elements. `dnsPort`
   * is the host port of the platform's DNS service: a sandbox's DNS queries, to any address,
   * go there.
   */
  async install(dnsPort?: number): Promise<void> {
    const t = `inet ${this.table}`;
    const veth = `"${this.hostIfPrefix}*"`;
    const open = this.o.allowInternal ?? [];
    const dns = dnsPort;
    const script = [
      `add table ${t}`,
      `add set ${t} internet { type ifname . ipv4_addr; }`,
      `add set ${t} denied { type ipv4_addr; flags interval; }`,
      `flush set ${t} denied`,
      `add element ${t} denied { ${ALWAYS_DENIED_IPV4.join(", ")} }`,
      `add set ${t} opened { type ipv4_addr; flags interval; }`,
      `flush set ${t} opened`,
      ...(open.length > 0 ? [`add element ${t} opened { ${open.join(", ")} }`] : []),
      // TCP gets a reset: gVisor ignores ICMP unreachable on connect and would wait for a timeout
      `add chain ${t} refuse`,
      `flush chain ${t} refuse`,
      `add rule ${t} refuse meta l4proto tcp reject with tcp reset`,
      `add rule ${t} refuse reject`,
      `add chain ${t} prerouting { type nat hook prerouting priority dstnat; policy accept; }`,
      `flush chain ${t} prerouting`,
      ...(dns
        ? [
            `add rule ${t} prerouting iifname . ip saddr @internet meta l4proto { tcp, udp } th dport 53 redirect to :${dns}`,
          ]
        : []),
      `add chain ${t} input { type filter hook input priority filter; policy accept; }`,
      `flush chain ${t} input`,
      `add rule ${t} input iifname ${veth} ct state established,related accept`,
      ...(dns
        ? [
            `add rule ${t} input iifname . ip saddr @internet meta l4proto { tcp, udp } th dport ${dns} accept`,
            // the service listens on every address: it is for sandboxes (and local checks) only
            `add rule ${t} input iifname != { ${veth}, "lo" } meta l4proto { tcp, udp } th dport ${dns} jump refuse`,
          ]
        : []),
      `add rule ${t} input iifname ${veth} jump refuse`,
      `add chain ${t} forward { type filter hook forward priority filter; policy accept; }`,
      `flush chain ${t} forward`,
      `add rule ${t} forward iifname ${veth} oifname ${veth} jump refuse`,
      `add rule ${t} forward oifname ${veth} ct state established,related accept`,
      `add rule ${t} forward oifname ${veth} jump refuse`,
      `add rule ${t} forward iifname . ip saddr @internet ip daddr @opened accept`,
      `add rule ${t} forward iifname ${veth} ip daddr @denied jump refuse`,
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
