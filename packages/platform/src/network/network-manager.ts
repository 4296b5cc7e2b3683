import { access, readdir } from "node:fs/promises";
import { CommandError, command } from "../lib/command.js";
import type { EgressPolicy } from "../model/network.js";
import { AddressPool, intToIp, ipToInt, type SlotAddresses } from "./address-pool.js";
import { type EgressRules, egressRules, OPEN_RULES } from "./egress-rules.js";
import { Firewall, type FirewallEntry, type FirewallPorts } from "./firewall.js";

export interface NetworkManagerOptions {
  /**
   * Prefix of every name this manager owns: netns `<prefix>-<id>`, host veth `<prefix>h<slot>`,
   * nftables table `<prefix>_net`. Distinct prefixes (and pools) keep several managers apart, e.g.
   * tests beside a running platform. At most 6 characters, since interface names stop at 15.
   */
  prefix?: string;
  /** Pool of /30s, default 10.200.0.0/16. */
  cidr?: string;
  /**
   * Internal IPv4 ranges (CIDRs) sandboxes with internet may reach although they are private,
   * e.g. a package mirror. Everything else private, loopback, link-local or CGNAT is refused.
   */
  allowInternal?: readonly string[];
}

export interface SandboxNetwork extends SlotAddresses {
  id: string;
  /** Name under /run/netns. */
  netns: string;
  netnsPath: string;
  /** Host end of the veth pair; the sandbox end is `eth0` inside the netns. */
  hostIf: string;
}

export interface CreateNetworkOptions {
  egress: EgressPolicy;
}

/** A sandbox's egress as the DNS service and the egress proxy look it up, by its address. */
export interface SandboxEgress {
  id: string;
  rules: EgressRules;
}

const NETNS_DIR = "/run/netns";
const SANDBOX_IF = "eth0";

/**
 * Network namespaces, veth pairs and addresses for sandboxes. Holds no state file: the sandbox
 * a veth belongs to is stored in the host veth's ifalias, so the kernel is the record and a
 * restarted platform reads the allocation back with list().
 */
export class NetworkManager {
  readonly prefix: string;
  readonly pool: AddressPool;
  readonly firewall: Firewall;
  /** Internal ranges the operator opened to sandboxes, canonical. */
  readonly allowInternal: readonly string[];
  /** Called when a sandbox's network is gone, for what is kept about it elsewhere (its decision log). */
  onRemoved?: (id: string) => void;
  /** Slots handed out by create() calls still in flight. */
  private readonly reserved = new Set<number>();
  /**
   * The networks of this manager by sandbox id, read from the kernel once and kept up to date
   * by create and destroy, so neither asks the kernel (an `ip` process) every time.
   */
  private known: Promise<Map<string, SandboxNetwork>> | undefined;
  /** Each sandbox's firewall entry, by sandbox id: the sets are built from these. */
  private readonly entries = new Map<string, FirewallEntry>();
  /** The same, by sandbox address, for the DNS service and the egress proxy. */
  private readonly byAddress = new Map<string, SandboxEgress>();
  /** Addresses put in the firewall's `resolved` set, by sandbox id, to take out when it goes. */
  private readonly resolved = new Map<string, Set<string>>();

  constructor(opts: NetworkManagerOptions = {}) {
    this.prefix = opts.prefix ?? "x";
    if (!/^[a-z][a-z0-9]{0,5}$/.test(this.prefix)) {
      throw new Error(`network prefix must be 1-6 lowercase letters or digits, got "${this.prefix}"`);
    }
    this.pool = new AddressPool(opts.cidr ?? "10.200.0.0/16");
    this.allowInternal = (opts.allowInternal ?? []).map(canonicalCidr);
    this.firewall = new Firewall({
      table: `${this.prefix}_net`,
      hostIfPrefix: `${this.prefix}h`,
      allowInternal: this.allowInternal,
      poolCidr: canonicalCidr(this.pool.cidr),
    });
  }

  /**
   * Installs the host firewall table, with the entries of the sandboxes kept from before (see
   * remember()); call once at startup, before create(). The ports are where the platform's DNS
   * service and egress proxy listen.
   */
  async init(ports: FirewallPorts = {}): Promise<void> {
    await this.firewall.install(ports, [...this.entries.values()]);
  }

  /** Records the egress of a sandbox adopted after a restart; init() puts it in the firewall. */
  remember(net: SandboxNetwork, egress: EgressPolicy): void {
    this.track(net, egressRules(egress));
  }

  /** The egress of the sandbox at this address, if it is one of ours. */
  egressAt(sandboxIp: string): SandboxEgress | undefined {
    return this.byAddress.get(sandboxIp);
  }

  /** The egress of a sandbox by its id, if it has a network of ours. */
  egressOf(id: string): SandboxEgress | undefined {
    const entry = this.entries.get(id);
    return entry ? { id, rules: entry.rules } : undefined;
  }

  /**
   * Replaces a sandbox's egress rules: connections opened from now on follow them, and the
   * requests of connections intercepted for header transforms use the new transforms.
   */
  async setEgress(net: SandboxNetwork, egress: EgressPolicy): Promise<void> {
    const before = this.entries.get(net.id);
    const entry = this.track(net, egressRules(egress));
    await this.firewall.replace(entry, before);
  }

  /**
   * Addresses the DNS service answered the sandbox at `sandboxIp` for an allowed name: its
   * connections to them may be let out by name from now on, for at least `seconds`.
   */
  async allowResolved(sandboxIp: string, ips: readonly string[], seconds: number): Promise<void> {
    const sandbox = this.byAddress.get(sandboxIp);
    const entry = sandbox && this.entries.get(sandbox.id);
    if (!sandbox || !entry || sandbox.rules.domains.length === 0) return;
    await this.firewall.addResolved(entry.hostIf, ips, seconds);
    let known = this.resolved.get(sandbox.id);
    if (!known) {
      known = new Set();
      this.resolved.set(sandbox.id, known);
    }
    for (const ip of ips) known.add(ip);
  }

  private track(net: SandboxNetwork, rules: EgressRules): FirewallEntry {
    const entry = { hostIf: net.hostIf, sandboxIp: net.sandboxIp, rules };
    this.entries.set(net.id, entry);
    this.byAddress.set(net.sandboxIp, { id: net.id, rules });
    return entry;
  }

  private untrack(net: SandboxNetwork): FirewallEntry {
    const entry = this.entries.get(net.id) ?? {
      hostIf: net.hostIf,
      sandboxIp: net.sandboxIp,
      rules: OPEN_RULES,
    };
    this.entries.delete(net.id);
    if (this.byAddress.get(net.sandboxIp)?.id === net.id) this.byAddress.delete(net.sandboxIp);
    return entry;
  }

  private index(): Promise<Map<string, SandboxNetwork>> {
    this.known ??= this.list().then(
      (nets) => new Map(nets.map((n) => [n.id, n])),
      (err: unknown) => {
        this.known = undefined;
        throw err;
      },
    );
    return this.known;
  }

  /** A network for the sandbox: three processes (host side, sandbox side, firewall) in all. */
  async create(id: string, opts: CreateNetworkOptions): Promise<SandboxNetwork> {
    assertId(id);
    const known = await this.index();
    const taken = new Set([...[...known.values()].map((n) => n.slot), ...this.reserved]);
    const slot = this.pool.firstFree(taken);
    this.reserved.add(slot);
    const net = this.describe(id, slot);
    try {
      await command("ip", ["-batch", "-"], {
        input: [
          `netns add ${net.netns}`,
          `link add ${net.hostIf} type veth peer name ${SANDBOX_IF} netns ${net.netns}`,
          `link set ${net.hostIf} alias ${id}`,
          `addr add ${net.hostIp}/${net.prefixLength} dev ${net.hostIf}`,
          `link set ${net.hostIf} up`,
        ].join("\n"),
      });
      known.set(id, net);
      await this.prepare(net);
      await this.setEgress(net, opts.egress);
      return net;
    } catch (err) {
      await this.destroyParts(net);
      throw err;
    } finally {
      this.reserved.delete(slot);
    }
  }

  /**
   * (Re)configures the sandbox side of the link. gVisor moves the netns's addresses into its
   * own network stack and they are gone from eth0 when it exits, so run this before every start.
   */
  async prepare(net: SandboxNetwork): Promise<void> {
    await command("ip", ["-n", net.netns, "-batch", "-"], {
      input: [
        "link set lo up",
        `addr flush dev ${SANDBOX_IF}`,
        `addr add ${net.sandboxIp}/${net.prefixLength} dev ${SANDBOX_IF}`,
        `link set ${SANDBOX_IF} up`,
        `route replace default via ${net.hostIp}`,
      ].join("\n"),
    });
  }

  /** A sandbox's entry as the kernel's firewall holds it (for checks). */
  async firewallEntry(net: SandboxNetwork): Promise<FirewallEntry | undefined> {
    const entry = (await this.firewall.entries()).get(net.hostIf);
    return entry?.sandboxIp === net.sandboxIp ? entry : undefined;
  }

  async get(id: string): Promise<SandboxNetwork | undefined> {
    return (await this.index()).get(id);
  }

  /** Every sandbox network of this manager, read from the kernel's veths. */
  async list(): Promise<SandboxNetwork[]> {
    const links = JSON.parse(await command("ip", ["-j", "link", "show", "type", "veth"])) as Array<{
      ifname: string;
      ifalias?: string;
    }>;
    const nets: SandboxNetwork[] = [];
    for (const link of links) {
      const slot = this.slotOf(link.ifname);
      if (slot !== undefined && link.ifalias) nets.push(this.describe(link.ifalias, slot));
    }
    return nets;
  }

  async destroy(id: string): Promise<void> {
    const net = await this.get(id);
    if (net) await this.destroyParts(net);
    else if (await exists(`${NETNS_DIR}/${this.netnsName(id)}`))
      await ignoreMissing(command("ip", ["netns", "delete", this.netnsName(id)]));
  }

  /**
   * Removes every netns, veth and firewall entry carrying this manager's prefix whose sandbox id
   * is not in `keep`; with nothing to keep the firewall table goes too. Returns what it removed.
   */
  /** Ids of every sandbox with a network of this platform: a host link or only a namespace. */
  async ids(): Promise<string[]> {
    const ids = new Set((await this.list()).map((n) => n.id));
    for (const name of await readdir(NETNS_DIR).catch(() => [] as string[])) {
      if (name.startsWith(`${this.prefix}-`)) ids.add(name.slice(this.prefix.length + 1));
    }
    return [...ids];
  }

  async sweep(keep: ReadonlySet<string> = new Set()): Promise<{ netns: string[]; links: string[] }> {
    const removed = { netns: [] as string[], links: [] as string[] };
    for (const net of await this.list()) {
      if (keep.has(net.id)) continue;
      await ignoreMissing(command("ip", ["link", "delete", net.hostIf]));
      removed.links.push(net.hostIf);
    }
    // veths without an alias are half-created ones
    const links = JSON.parse(await command("ip", ["-j", "link", "show", "type", "veth"])) as Array<{
      ifname: string;
      ifalias?: string;
    }>;
    for (const link of links) {
      if (this.slotOf(link.ifname) !== undefined && !link.ifalias) {
        await ignoreMissing(command("ip", ["link", "delete", link.ifname]));
        removed.links.push(link.ifname);
      }
    }
    const names = await readdir(NETNS_DIR).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(`${this.prefix}-`) || keep.has(name.slice(this.prefix.length + 1))) continue;
      await ignoreMissing(command("ip", ["netns", "delete", name]));
      removed.netns.push(name);
    }
    for (const [id, entry] of [...this.entries]) {
      if (keep.has(id)) continue;
      this.entries.delete(id);
      if (this.byAddress.get(entry.sandboxIp)?.id === id) this.byAddress.delete(entry.sandboxIp);
      await this.firewall.replace(undefined, entry).catch((err: unknown) => {
        if (!(err instanceof CommandError)) throw err;
      });
    }
    if (keep.size === 0) await this.firewall.remove();
    this.known = undefined;
    return removed;
  }

  netnsName(id: string): string {
    return `${this.prefix}-${id}`;
  }

  private describe(id: string, slot: number): SandboxNetwork {
    const netns = this.netnsName(id);
    return {
      id,
      netns,
      netnsPath: `${NETNS_DIR}/${netns}`,
      hostIf: `${this.prefix}h${slot}`,
      ...this.pool.addresses(slot),
    };
  }

  private slotOf(ifname: string): number | undefined {
    const m = new RegExp(`^${this.prefix}h(\\d+)$`).exec(ifname);
    const slot = m ? Number(m[1]) : NaN;
    return slot < this.pool.size ? slot : undefined;
  }

  private async destroyParts(net: SandboxNetwork): Promise<void> {
    // deleting the host end deletes its peer inside the netns as well; -force goes on past
    // a part that is gone already
    await ignoreMissing(
      command("ip", ["-force", "-batch", "-"], {
        input: `link delete ${net.hostIf}\nnetns delete ${net.netns}`,
      }),
    );
    (await this.index()).delete(net.id);
    this.onRemoved?.(net.id);
    const resolved = [...(this.resolved.get(net.id) ?? [])];
    this.resolved.delete(net.id);
    await this.firewall.removeResolved(net.hostIf, resolved).catch(() => undefined);
    await this.firewall.replace(undefined, this.untrack(net)).catch((err: unknown) => {
      // no table (swept already) means no entry either
      if (!(err instanceof CommandError)) throw err;
    });
  }
}

export function createNetworkManager(opts: NetworkManagerOptions = {}): NetworkManager {
  return new NetworkManager(opts);
}

/** An IPv4 CIDR (or address) as nftables takes it, its host bits cleared; throws on anything else. */
export function canonicalCidr(text: string): string {
  const [ip, len = "32", ...rest] = text.trim().split("/");
  const prefix = Number(len);
  if (!ip || rest.length > 0 || !/^\d{1,2}$/.test(len) || prefix > 32) {
    throw new Error(`not an IPv4 CIDR: "${text}"`);
  }
  const mask = prefix === 0 ? 0 : (~0 << (32 - prefix)) >>> 0;
  return `${intToIp((ipToInt(ip) & mask) >>> 0)}/${prefix}`;
}

function assertId(id: string): void {
  // the id becomes part of a netns file name and an interface alias
  if (!/^[A-Za-z0-9][A-Za-z0-9_.-]{0,62}$/.test(id))
    throw new Error(`invalid sandbox id for networking: "${id}"`);
}

async function exists(path: string): Promise<boolean> {
  return access(path).then(
    () => true,
    () => false,
  );
}

/** Tolerates "does not exist" failures so teardown is idempotent. */
async function ignoreMissing(p: Promise<unknown>): Promise<void> {
  try {
    await p;
  } catch (err) {
    if (
      err instanceof CommandError &&
      /does not exist|No such file|Cannot find device|not found/i.test(err.stderr)
    )
      return;
    throw err;
  }
}
