import { BlockList, isIPv4, isIPv6 } from "node:net";
import type { Logger } from "../lib/log.js";
import type { ChildRecords } from "../lib/owned-process.js";
import type { PlaceholderValues } from "../model/placeholders.js";
import { DnsForwarder, type Upstream } from "./dns-forwarder.js";
import type { EgressCa } from "./egress-ca.js";
import { EgressLog } from "./egress-log.js";
import { EgressProxy } from "./egress-proxy.js";
import { allowedDomain, deniesEverything } from "./egress-rules.js";
import { EgressTrace } from "./egress-trace.js";
import { ALWAYS_DENIED_IPV4, type FirewallPorts } from "./firewall.js";
import { NameMemory } from "./name-memory.js";
import { canonicalCidr, type NetworkManager } from "./network-manager.js";
import { outboundConnector } from "./outbound.js";
import { ProtectedAddresses } from "./protected-addresses.js";
import { HeaderTransformer } from "./transform-proxy.js";

export interface EgressServicesOptions {
  network: NetworkManager;
  /** Where the platform resolves names: sandboxes' queries and the egress proxy's own. */
  upstreams: readonly Upstream[];
  /** Where the helper processes it starts are recorded, for the next start to end any left. */
  children?: ChildRecords;
  /** What header transforms need; without it, connections to names with rules pass through. */
  transforms?: {
    ca: EgressCa;
    /** CAs (PEM) trusted for origins besides the system's. */
    trusted: readonly string[];
    placeholders: PlaceholderValues;
    teamOf(sandboxId: string): Promise<string | undefined>;
  };
  /** Beyond one machine: the hosts of the cluster's nodes and catalog, which sandboxes never reach. */
  clusterHosts?(): Promise<string[]>;
  log: Logger;
}

/** IPv6 answers a sandbox is never given (it has no IPv6 route; these name internal hosts). */
const INTERNAL_IPV6 = (() => {
  const list = new BlockList();
  for (const [net, bits] of [
    ["::", 128],
    ["::1", 128],
    ["fc00::", 7],
    ["fe80::", 10],
    ["fec0::", 10],
    ["ff00::", 8],
  ] as const)
    list.addSubnet(net, bits, "ipv6");
  return list;
})();

function blockListOf(cidrs: readonly string[]): BlockList {
  const list = new BlockList();
  for (const c of cidrs) {
    const [net, bits] = c.split("/");
    list.addSubnet(net!, Number(bits ?? 32), "ipv4");
  }
  return list;
}

/**
 * The platform's side of sandboxes' egress beyond the firewall's sets: the DNS service (which
 * answers only allowed names when a sandbox's policy denies everything else, and remembers
 * what it answered), the egress proxy (connections only a name can allow), the reader of the
 * firewall's verdicts, and the decision log all three write to.
 */
export class EgressServices {
  readonly log = new EgressLog();
  readonly names = new NameMemory();
  readonly dns: DnsForwarder;
  private readonly proxy: EgressProxy;
  /**
   * Whether a sandbox may never reach this address: this host's own, the sandbox pool, the
   * cluster's nodes (whatever the operator opened), or private and not opened.
   */
  readonly forbidden: (ip: string) => boolean;
  /** Why a sandbox may never reach this address, for the decision log; undefined when it may. */
  readonly refusal: (ip: string) => string | undefined;
  private readonly protectedAddresses: ProtectedAddresses;
  private readonly trace: EgressTrace;

  constructor(o: EgressServicesOptions) {
    const { network } = o;
    const record = this.log.record.bind(this.log);
    const denied = blockListOf(ALWAYS_DENIED_IPV4);
    const opened = blockListOf(network.allowInternal);
    this.protectedAddresses = new ProtectedAddresses({
      pool: canonicalCidr(network.pool.cidr),
      ...(o.clusterHosts ? { clusterHosts: o.clusterHosts } : {}),
      onClusterChange: (ips) => network.firewall.setClusterAddresses(ips),
      log: o.log.child({ component: "egress" }),
    });
    this.refusal = (ip) => {
      if (!isIPv4(ip)) return undefined;
      const protectedAs = this.protectedAddresses.why(ip);
      if (protectedAs) return protectedAs;
      return denied.check(ip, "ipv4") && !opened.check(ip, "ipv4") ? "private range" : undefined;
    };
    this.forbidden = (ip) => this.refusal(ip) !== undefined;
    this.dns = new DnsForwarder({
      upstreams: o.upstreams,
      log: o.log.child({ component: "dns" }),
      gate: {
        admit: (clientIp, name) => {
          const sandbox = network.egressAt(clientIp);
          if (!sandbox || !deniesEverything(sandbox.rules)) return true;
          const pattern = allowedDomain(sandbox.rules, name);
          record({
            sandboxId: sandbox.id,
            protocol: "dns",
            name,
            verdict: pattern ? "allowed" : "denied",
            rule: pattern ? `allowOut ${pattern}` : "not an allowed name",
          });
          return pattern !== undefined;
        },
        // a sandbox learns no address it could never reach: the host's internal names stay its own
        withhold: (clientIp, name, address) => {
          const sandbox = network.egressAt(clientIp);
          if (!sandbox) return undefined;
          const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address)?.[1];
          const why = isIPv6(address)
            ? mapped
              ? this.refusal(mapped)
              : INTERNAL_IPV6.check(address, "ipv6")
                ? "internal IPv6 address"
                : undefined
            : this.refusal(address);
          if (why)
            record({
              sandboxId: sandbox.id,
              protocol: "dns",
              name: name.toLowerCase(),
              destination: address,
              verdict: "denied",
              rule: `answer withheld: ${why}`,
            });
          return why;
        },
        answered: async (clientIp, name, addresses) => {
          const sandbox = network.egressAt(clientIp);
          if (!sandbox || !deniesEverything(sandbox.rules)) return;
          this.names.remember(sandbox.id, name, addresses);
          const seconds = Math.ceil(this.names.keepMs(addresses) / 1000);
          await network
            .allowResolved(
              clientIp,
              addresses.map((a) => a.ip),
              seconds,
            )
            .catch((err: unknown) =>
              o.log.warn({ err, sandboxId: sandbox.id }, "could not allow resolved addresses"),
            );
        },
      },
    });
    // the proxy's connections carry the firewall's mark: the kernel judges them too
    const connect = outboundConnector(network.firewall.proxyMark);
    this.proxy = new EgressProxy({
      egressAt: (ip) => network.egressAt(ip),
      nameOf: (id, ip) => this.names.nameOf(id, ip),
      resolve: (name) => this.dns.resolve4(name),
      refusal: this.refusal,
      record,
      connect,
      ...(o.transforms
        ? {
            transformer: new HeaderTransformer({
              ...o.transforms,
              transformsOf: (id) => network.egressOf(id)?.rules.transforms,
              record,
              connect,
              log: o.log.child({ component: "egress-transforms" }),
            }),
          }
        : {}),
      log: o.log.child({ component: "egress-proxy" }),
    });
    this.trace = new EgressTrace({
      table: network.firewall.table,
      egressAt: (ip) => network.egressAt(ip),
      record,
      ...(o.children ? { children: o.children } : {}),
      log: o.log.child({ component: "egress-trace" }),
    });
  }

  /** Starts the DNS service and the egress proxy; returns the ports the firewall sends to. */
  async start(): Promise<FirewallPorts> {
    await this.protectedAddresses.start();
    const dns = await this.dns.listen();
    const egress = await this.proxy.listen();
    return { dns, egress };
  }

  /**
   * Starts reading the firewall's verdicts: after it is installed, since `nft monitor` knows
   * the rules (and their comments) that exist when it starts.
   */
  watchFirewall(): void {
    this.trace.start();
  }

  /** A sandbox whose network is gone: the names it resolved go too (its log stays, bounded). */
  forget(sandboxId: string): void {
    this.names.forget(sandboxId);
  }

  async close(): Promise<void> {
    this.protectedAddresses.close();
    this.trace.close();
    await this.proxy.close();
    await this.dns.close();
  }
}
