import { CommandError, command } from "../lib/command.js";
import type { EgressRules } from "./egress-rules.js";

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
  /** Internal IPv4 ranges the operator opens to sandboxes (a package mirror, say). */
  allowInternal?: readonly string[];
  /** The sandbox address pool: the egress proxy's connections never go there. */
  poolCidr?: string;
}

/** Host ports of the platform's services for sandboxes. */
export interface FirewallPorts {
  /** The DNS service: a sandbox's DNS queries, to any address, go there. */
  dns?: number;
  /** The egress proxy: TCP that only an allowed name can let out goes there. */
  egress?: number;
}

/** One sandbox's place in the firewall: its link, its address and its egress rules. */
export interface FirewallEntry {
  hostIf: string;
  sandboxIp: string;
  rules: EgressRules;
}

/** New connections per sandbox whose verdict the kernel reports for the decision log. */
export const TRACE_RATE = "50/second burst 100 packets";

/** Comments on the rules that decide, read back from the kernel's trace (egress-trace.ts). */
export const RULE_COMMENT = {
  allowOut: "x:allowOut",
  denyOut: "x:denyOut",
  default: "x:default",
  private: "x:private",
  spoofed: "x:spoofed",
  toProxy: "x:to-proxy",
  dns: "x:dns",
  proxyOut: "x:proxy-out",
} as const;

/**
 * The mark (SO_MARK) of the egress proxy's outgoing connections for a table: the output chain
 * refuses what they must never reach. One per table, so that platforms side by side (tests)
 * each judge only their own proxy's connections; high bits no common user of marks (kube-proxy,
 * Calico, Cilium, WireGuard) sets.
 */
export function proxyMarkOf(table: string): number {
  let h = 0x811c9dc5;
  for (const c of Buffer.from(table)) h = Math.imul(h ^ c, 0x01000193) >>> 0;
  return (0x78000000 | (h & 0x00ffffff)) >>> 0;
}

/**
 * The host-side policy for all sandboxes, one nftables table owned by the platform:
 * - a sandbox reaches neither the host's own services (input) nor another sandbox (forward);
 * - the host may connect into a sandbox (its replies pass as established);
 * - a sandbox sends only from its own address (the `sandboxes` set of (host veth, IP) pairs);
 * - private, loopback, link-local, CGNAT and reserved destinations are refused for every
 *   sandbox (ALWAYS_DENIED_IPV4) unless the operator opened them; IPv6 is refused (sandboxes
 *   have none);
 * - then each sandbox's own rules, kept in sets keyed by its host veth: an address in
 *   `allow_out` goes out, one in `deny_out` is refused, anything else goes out (masqueraded).
 *   TCP of a sandbox with allowed names (`by_name`) that its addresses would refuse, to an
 *   address the DNS service gave it for an allowed name (`resolved`), is redirected to the
 *   egress proxy, which lets it out only to an allowed name. TCP to ports 80 and 443 of a
 *   sandbox with header transforms (`transform`) goes to the egress proxy as well, which
 *   takes the same decision and rewrites the requests to names with a rule. Every TCP
 *   connection of a sandbox with its own SOCKS5 proxy (`socks`) goes there too, which takes
 *   the same decision and tunnels what it lets out through that proxy (never directly);
 * - DNS (port 53, UDP and TCP, to any address) goes to the platform's own resolver;
 * - the egress proxy's own connections (marked with `proxyMark`) never reach this host's
 *   addresses, the sandbox pool or the cluster's nodes, whatever is opened, nor a private range
 *   the operator did not open.
 * Refusals reject (TCP reset, ICMP otherwise), so a blocked connection fails at once. The
 * first packet of every sandbox connection is traced (nftrace), so the decision log can read
 * the verdict from the kernel. The rules match host veths by name prefix, so they never touch
 * traffic that is not ours.
 */
export class Firewall {
  readonly table: string;
  readonly hostIfPrefix: string;
  /** What the egress proxy marks its outgoing connections with (see the output chain). */
  readonly proxyMark: number;
  /** The cluster's nodes' and catalog's addresses, put in `cluster` at each install. */
  private clusterIps: readonly string[] = [];

  constructor(private readonly o: FirewallOptions) {
    this.table = o.table;
    this.hostIfPrefix = o.hostIfPrefix;
    this.proxyMark = proxyMarkOf(o.table);
  }

  /**
   * Creates or refreshes the table atomically, with the sets holding exactly `entries` (what
   * the platform knows of the sandboxes it keeps).
   */
  async install(ports: FirewallPorts, entries: readonly FirewallEntry[]): Promise<void> {
    const t = `inet ${this.table}`;
    const veth = `"${this.hostIfPrefix}*"`;
    const open = this.o.allowInternal ?? [];
    const { dns, egress } = ports;
    const c = RULE_COMMENT;
    const mark = `0x${this.proxyMark.toString(16)}`;
    // a chain that sends TCP to the egress proxy, but not to a private address (the forward
    // chain refuses those)
    const toProxy = (chain: string) => [
      `add chain ${t} ${chain}`,
      `flush chain ${t} ${chain}`,
      ...(egress
        ? [
            `add rule ${t} ${chain} ip daddr @denied ip daddr != @opened return`,
            `add rule ${t} ${chain} meta l4proto tcp redirect to :${egress} comment "${c.toProxy}"`,
          ]
        : []),
    ];
    const script = [
      `add table ${t}`,
      `add set ${t} sandboxes { type ifname . ipv4_addr; }`,
      `add set ${t} allow_out { type ifname . ipv4_addr; flags interval; }`,
      `add set ${t} deny_out { type ifname . ipv4_addr; flags interval; }`,
      `add set ${t} by_name { type ifname; }`,
      // sandboxes with header transforms: their HTTP and HTTPS go through the egress proxy
      `add set ${t} transform { type ifname; }`,
      // sandboxes with their own SOCKS5 proxy: all their TCP goes through the egress proxy
      `add set ${t} socks { type ifname; }`,
      // addresses the DNS service gave sandboxes with allowed names; kept across restarts
      `add set ${t} resolved { type ifname . ipv4_addr; flags timeout; }`,
      ...["sandboxes", "allow_out", "deny_out", "by_name", "transform", "socks"].map(
        (set) => `flush set ${t} ${set}`,
      ),
      ...entries.flatMap((e) => this.elements("add", e)),
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
      // TCP that only a name could let out; the egress proxy decides by name
      `add chain ${t} name_check`,
      `flush chain ${t} name_check`,
      ...(egress
        ? [
            `add rule ${t} name_check iifname . ip daddr @allow_out return`,
            `add rule ${t} name_check iifname . ip daddr != @deny_out return`,
            // only an address an allowed name resolved to can be let out by name: anything
            // else is refused at once by the address rules
            `add rule ${t} name_check iifname . ip daddr != @resolved return`,
            `add rule ${t} name_check ip daddr @denied ip daddr != @opened return`,
            `add rule ${t} name_check meta l4proto tcp redirect to :${egress} comment "${c.toProxy}"`,
          ]
        : []),
      // TCP to ports 80 and 443 of a sandbox with header transforms: the egress proxy decides
      // allow and deny itself, then intercepts only the names that have a rule
      ...toProxy("transform_check"),
      // every TCP connection of a sandbox with its own SOCKS5 proxy: the egress proxy decides
      // allow and deny, then tunnels what it lets out through the sandbox's proxy
      ...toProxy("socks_check"),
      `add chain ${t} prerouting { type nat hook prerouting priority dstnat; policy accept; }`,
      `flush chain ${t} prerouting`,
      // nat sees only a connection's first packet: that one is traced, whatever its verdict,
      // up to a rate per sandbox (the decision log is a sample beyond it)
      `add set ${t} trace_rate { type ifname; flags dynamic,timeout; timeout 1m; }`,
      `add rule ${t} prerouting iifname ${veth} update @trace_rate { iifname limit rate ${TRACE_RATE} } meta nftrace set 1`,
      ...(dns
        ? [
            `add rule ${t} prerouting iifname . ip saddr @sandboxes meta l4proto { tcp, udp } th dport 53 redirect to :${dns} comment "${c.dns}"`,
          ]
        : []),
      `add rule ${t} prerouting iifname @socks iifname . ip saddr @sandboxes meta l4proto tcp jump socks_check`,
      `add rule ${t} prerouting iifname @transform iifname . ip saddr @sandboxes tcp dport { 80, 443 } jump transform_check`,
      `add rule ${t} prerouting iifname @by_name iifname . ip saddr @sandboxes meta l4proto tcp jump name_check`,
      `add chain ${t} input { type filter hook input priority filter; policy accept; }`,
      `flush chain ${t} input`,
      `add rule ${t} input iifname ${veth} ct state established,related accept`,
      ...(dns
        ? [
            `add rule ${t} input iifname . ip saddr @sandboxes meta l4proto { tcp, udp } th dport ${dns} accept`,
            // the service listens on every address: it is for sandboxes (and local checks) only
            `add rule ${t} input iifname != { ${veth}, "lo" } meta l4proto { tcp, udp } th dport ${dns} jump refuse`,
          ]
        : []),
      ...(egress
        ? [
            `add rule ${t} input iifname . ip saddr @sandboxes tcp dport ${egress} ct status dnat accept`,
            `add rule ${t} input iifname != "lo" tcp dport ${egress} jump refuse`,
          ]
        : []),
      `add rule ${t} input iifname ${veth} jump refuse`,
      `add chain ${t} egress`,
      `flush chain ${t} egress`,
      `add rule ${t} egress iifname . ip daddr @allow_out accept comment "${c.allowOut}"`,
      `add rule ${t} egress iifname . ip daddr @deny_out jump refuse comment "${c.denyOut}"`,
      `add rule ${t} egress accept comment "${c.default}"`,
      `add chain ${t} forward { type filter hook forward priority filter; policy accept; }`,
      `flush chain ${t} forward`,
      `add rule ${t} forward iifname ${veth} oifname ${veth} jump refuse`,
      `add rule ${t} forward oifname ${veth} ct state established,related accept`,
      `add rule ${t} forward oifname ${veth} jump refuse`,
      `add rule ${t} forward iifname ${veth} iifname . ip saddr != @sandboxes jump refuse comment "${c.spoofed}"`,
      `add rule ${t} forward iifname ${veth} ip daddr @opened goto egress`,
      `add rule ${t} forward iifname ${veth} ip daddr @denied jump refuse comment "${c.private}"`,
      `add rule ${t} forward iifname ${veth} meta nfproto ipv6 jump refuse comment "${c.private}"`,
      `add rule ${t} forward iifname ${veth} goto egress`,
      `add chain ${t} postrouting { type nat hook postrouting priority srcnat; policy accept; }`,
      `flush chain ${t} postrouting`,
      `add rule ${t} postrouting iifname ${veth} oifname != ${veth} masquerade`,
      // the egress proxy's own connections (marked): never to this host, the pool or the
      // cluster's nodes, whatever is opened, and to private ranges only where opened; the
      // proxy refuses these itself first, this is the kernel's second opinion
      `add set ${t} cluster { type ipv4_addr; }`,
      `flush set ${t} cluster`,
      ...(this.clusterIps.length > 0 ? [`add element ${t} cluster { ${this.clusterIps.join(", ")} }`] : []),
      `add chain ${t} output { type filter hook output priority filter; policy accept; }`,
      `flush chain ${t} output`,
      `add rule ${t} output meta mark ${mark} fib daddr type local jump refuse comment "${c.proxyOut}"`,
      ...(this.o.poolCidr
        ? [
            `add rule ${t} output meta mark ${mark} ip daddr ${this.o.poolCidr} jump refuse comment "${c.proxyOut}"`,
          ]
        : []),
      `add rule ${t} output meta mark ${mark} ip daddr @cluster jump refuse comment "${c.proxyOut}"`,
      `add rule ${t} output meta mark ${mark} ip daddr @opened accept`,
      `add rule ${t} output meta mark ${mark} ip daddr @denied jump refuse comment "${c.proxyOut}"`,
      `add rule ${t} output meta mark ${mark} meta nfproto ipv6 jump refuse comment "${c.proxyOut}"`,
    ].join("\n");
    await command("nft", ["-f", "-"], { input: script });
    // forwarding is host-wide; NAT for sandboxes cannot work without it
    await command("sysctl", ["-q", "-w", "net.ipv4.ip_forward=1"]);
  }

  /**
   * Puts a sandbox's entry in place of what it had (`before`), in one transaction: connections
   * opened from now on follow the new rules. Removal of what is already gone is no error.
   */
  async replace(entry: FirewallEntry | undefined, before: FirewallEntry | undefined): Promise<void> {
    const script = [
      ...(before ? this.elements("remove", before) : []),
      ...(entry ? this.elements("add", entry) : []),
    ];
    if (script.length > 0) await command("nft", ["-f", "-"], { input: script.join("\n") });
  }

  /**
   * The cluster's nodes' and catalog's addresses now: the egress proxy's connections never go
   * there (kept for the next install, and put in the table's set when it exists).
   */
  async setClusterAddresses(ips: readonly string[]): Promise<void> {
    this.clusterIps = [...ips];
    if ((await this.describe()) === null) return;
    const set = `inet ${this.table} cluster`;
    await command("nft", ["-f", "-"], {
      input: [
        `flush set ${set}`,
        ...(ips.length > 0 ? [`add element ${set} { ${ips.join(", ")} }`] : []),
      ].join("\n"),
    });
  }

  /**
   * Addresses the platform's DNS service answered a sandbox for an allowed name: connections
   * to them may be let out by name (through the egress proxy) for `seconds`.
   */
  async addResolved(hostIf: string, ips: readonly string[], seconds: number): Promise<void> {
    if (ips.length === 0) return;
    const set = `inet ${this.table} resolved`;
    // re-adding an element does not renew its timeout: it is replaced
    const lines = ips.flatMap((ip) => [
      `add element ${set} { "${hostIf}" . ${ip} timeout ${seconds}s }`,
      `delete element ${set} { "${hostIf}" . ${ip} }`,
      `add element ${set} { "${hostIf}" . ${ip} timeout ${seconds}s }`,
    ]);
    await command("nft", ["-f", "-"], { input: lines.join("\n") });
  }

  /** Forgets the resolved addresses of a sandbox that is gone. */
  async removeResolved(hostIf: string, ips: readonly string[]): Promise<void> {
    if (ips.length === 0) return;
    const set = `inet ${this.table} resolved`;
    const lines = ips.flatMap((ip) => [
      `add element ${set} { "${hostIf}" . ${ip} timeout 1s }`,
      `delete element ${set} { "${hostIf}" . ${ip} }`,
    ]);
    await command("nft", ["-f", "-"], { input: lines.join("\n") });
  }

  /** The entries in the kernel's sets, by host veth (for checks: the platform keeps its own). */
  async entries(): Promise<Map<string, FirewallEntry>> {
    const found = new Map<string, FirewallEntry>();
    const of = (hostIf: string): FirewallEntry => {
      let e = found.get(hostIf);
      if (!e) {
        e = { hostIf, sandboxIp: "", rules: { allow: [], deny: [], domains: [] } };
        found.set(hostIf, e);
      }
      return e;
    };
    for (const set of ["sandboxes", "allow_out", "deny_out"] as const) {
      for (const [hostIf, addr] of await this.concatElements(set)) {
        if (set === "sandboxes") of(hostIf).sandboxIp = addr.replace(/\/32$/, "");
        else of(hostIf).rules[set === "allow_out" ? "allow" : "deny"].push(addr);
      }
    }
    return found;
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

  /**
   * nft lines adding or removing one entry's elements. nft 1.0.6 has no "destroy" and deleting
   * a missing element fails, so removal adds each element first in the same transaction.
   */
  private elements(op: "add" | "remove", e: FirewallEntry): string[] {
    const t = `inet ${this.table}`;
    const lines: string[] = [];
    const put = (set: string, element: string) => {
      lines.push(`add element ${t} ${set} { ${element} }`);
      if (op === "remove") lines.push(`delete element ${t} ${set} { ${element} }`);
    };
    const hostIf = `"${e.hostIf}"`;
    put("sandboxes", `${hostIf} . ${e.sandboxIp}`);
    for (const cidr of e.rules.allow) put("allow_out", `${hostIf} . ${cidr}`);
    for (const cidr of e.rules.deny) put("deny_out", `${hostIf} . ${cidr}`);
    if (e.rules.domains.length > 0) put("by_name", hostIf);
    if (e.rules.transforms) put("transform", hostIf);
    if (e.rules.socks) put("socks", hostIf);
    return lines;
  }

  private async concatElements(set: string): Promise<Array<[string, string]>> {
    const out = await command("nft", ["-j", "list", "set", "inet", this.table, set]);
    const parsed = JSON.parse(out) as { nftables: Array<{ set?: { elem?: unknown[] } }> };
    const elems = parsed.nftables.find((x) => x.set)?.set?.elem ?? [];
    return elems.map((e) => {
      const [hostIf, addr] = (e as { concat: [string, string | { prefix: { addr: string; len: number } }] })
        .concat;
      return [hostIf, typeof addr === "string" ? `${addr}/32` : `${addr.prefix.addr}/${addr.prefix.len}`];
    });
  }
}
