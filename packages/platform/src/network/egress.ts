import type { Logger } from "../lib/log.js";
import type { ChildRecords } from "../lib/owned-process.js";
import type { StoredEgressProxy } from "../model/network.js";
import type { PlaceholderValues } from "../model/placeholders.js";
import { DnsForwarder, type Upstream } from "./dns-forwarder.js";
import type { EgressCa } from "./egress-ca.js";
import { EgressLog } from "./egress-log.js";
import { EgressProxy } from "./egress-proxy.js";
import { allowedDomain, deniesEverything, inCidr } from "./egress-rules.js";
import { EgressTrace } from "./egress-trace.js";
import { ALWAYS_DENIED_IPV4, type FirewallPorts } from "./firewall.js";
import { NameMemory } from "./name-memory.js";
import type { NetworkManager } from "./network-manager.js";
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
  /** Opens the sealed password of a sandbox's own SOCKS5 proxy (network/byop.ts). */
  socksPassword?(proxy: StoredEgressProxy): string | undefined;
  log: Logger;
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
  /** Whether a sandbox may never reach this address (private and not opened by the operator). */
  readonly forbidden: (ip: string) => boolean;
  private readonly trace: EgressTrace;

  constructor(o: EgressServicesOptions) {
    const { network } = o;
    const record = this.log.record.bind(this.log);
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
    const opened = network.allowInternal;
    this.forbidden = (ip) =>
      ALWAYS_DENIED_IPV4.some((c) => inCidr(ip, c)) && !opened.some((c) => inCidr(ip, c));
    this.proxy = new EgressProxy({
      egressAt: (ip) => network.egressAt(ip),
      nameOf: (id, ip) => this.names.nameOf(id, ip),
      resolve: (name) => this.dns.resolve4(name),
      forbidden: this.forbidden,
      record,
      ...(o.socksPassword ? { socksPassword: o.socksPassword } : {}),
      ...(o.transforms
        ? {
            transformer: new HeaderTransformer({
              ...o.transforms,
              transformsOf: (id) => network.egressOf(id)?.rules.transforms,
              record,
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
    this.trace.close();
    await this.proxy.close();
    await this.dns.close();
  }
}
