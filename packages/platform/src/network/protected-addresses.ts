import { lookup } from "node:dns/promises";
import { readFile } from "node:fs/promises";
import { BlockList, isIPv4 } from "node:net";
import type { Logger } from "../lib/log.js";

/** Why an address is never reached for a sandbox, whatever `--allow-internal` opens. */
export type ProtectedReason = "host address" | "sandbox pool" | "cluster node";

export interface ProtectedAddressesOptions {
  /** The sandbox address pool (a CIDR): other sandboxes are never reached through the platform. */
  pool: string;
  /**
   * The hosts (names or IPv4 addresses) of the cluster's nodes and catalog now; none for a
   * platform on its own.
   */
  clusterHosts?(): Promise<string[]>;
  /** IPv4 addresses of a cluster host's name; by default the system's resolver (as the platform reaches it). */
  resolve?(name: string): Promise<string[]>;
  /** This host's local prefixes (CIDRs); by default the kernel's local routes (/proc/net/fib_trie). */
  localPrefixes?(): Promise<string[]>;
  /** How often the host's addresses are read again; the cluster's hosts every sixth time. */
  refreshMs?: number;
  /** Told the cluster's addresses whenever they change (for the firewall's set). */
  onClusterChange?(ips: readonly string[]): Promise<void>;
  log: Logger;
}

/**
 * Destinations the egress proxy never connects to for a sandbox, whatever the operator opened:
 * the proxy dials from the host itself, past the input and forward chains that keep sandboxes
 * from the host and from each other, so an opened range that covers the host's own addresses,
 * the sandbox pool or the cluster's nodes (say `--allow-internal 10.0.0.0/8` for a mirror)
 * would otherwise reach them. The host's addresses are every local route of its network
 * namespace, read at start and again every few seconds; the cluster's are its nodes' and its
 * catalog's hosts, resolved.
 */
export class ProtectedAddresses {
  private local = new BlockList();
  private cluster = new BlockList();
  private clusterIps: string[] = [];
  private readonly pool = new BlockList();
  private timer: NodeJS.Timeout | undefined;
  private ticks = 0;

  constructor(private readonly o: ProtectedAddressesOptions) {
    const [net, bits] = o.pool.split("/");
    this.pool.addSubnet(net!, Number(bits ?? 32), "ipv4");
  }

  /** Why `ip` is protected, or undefined. */
  why(ip: string): ProtectedReason | undefined {
    if (!isIPv4(ip)) return undefined;
    if (this.pool.check(ip, "ipv4")) return "sandbox pool";
    if (this.local.check(ip, "ipv4")) return "host address";
    if (this.cluster.check(ip, "ipv4")) return "cluster node";
    return undefined;
  }

  /** Reads the host's and the cluster's addresses, then keeps them fresh until close(). */
  async start(): Promise<void> {
    await this.refreshLocal();
    await this.refreshCluster();
    const every = this.o.refreshMs ?? 5000;
    this.timer = setInterval(() => {
      void this.refreshLocal();
      if (++this.ticks % 6 === 0) void this.refreshCluster();
    }, every);
    this.timer.unref();
  }

  close(): void {
    clearInterval(this.timer);
  }

  /** Reads the host's local prefixes again; on a failure the ones known stay. */
  async refreshLocal(): Promise<void> {
    try {
      const prefixes = await (this.o.localPrefixes ?? readLocalPrefixes)();
      const list = new BlockList();
      for (const p of prefixes) {
        const [net, bits] = p.split("/");
        if (net && isIPv4(net)) list.addSubnet(net, Number(bits ?? 32), "ipv4");
      }
      this.local = list;
    } catch (err) {
      this.o.log.warn({ err }, "could not read this host's addresses; the ones read before stay refused");
    }
  }

  /** Resolves the cluster's hosts again; a host that does not resolve keeps its addresses of before. */
  async refreshCluster(): Promise<void> {
    if (!this.o.clusterHosts) return;
    let hosts: string[];
    try {
      hosts = await this.o.clusterHosts();
    } catch (err) {
      this.o.log.warn({ err }, "could not list the cluster's nodes; the addresses known stay refused");
      return;
    }
    const resolve = this.o.resolve ?? resolveSystem;
    const ips = new Set<string>();
    for (const host of new Set(hosts)) {
      if (isIPv4(host)) ips.add(host);
      else if (host !== "" && !host.includes(":") && !host.startsWith("/")) {
        try {
          for (const ip of await resolve(host)) ips.add(ip);
        } catch (err) {
          this.o.log.debug({ err, host }, "a cluster host did not resolve");
        }
      }
    }
    // what was refused stays refused: a name that fails to resolve once is no opening
    for (const ip of this.clusterIps) ips.add(ip);
    const sorted = [...ips].sort();
    if (sorted.join() === this.clusterIps.join()) return;
    const list = new BlockList();
    for (const ip of sorted) list.addAddress(ip, "ipv4");
    this.cluster = list;
    this.clusterIps = sorted;
    await this.o
      .onClusterChange?.(sorted)
      .catch((err: unknown) =>
        this.o.log.warn({ err }, "could not put the cluster's addresses in the firewall"),
      );
  }
}

async function resolveSystem(name: string): Promise<string[]> {
  return (await lookup(name, { all: true, family: 4 })).map((a) => a.address);
}

/** The local routes (addresses and AnyIP prefixes) of this network namespace, from the kernel's FIB. */
export async function readLocalPrefixes(): Promise<string[]> {
  return localPrefixesOf(await readFile("/proc/net/fib_trie", "utf8"));
}

/**
 * `/proc/net/fib_trie` lists each route as a leaf (`|-- 10.0.0.1`) followed by its prefixes and
 * types (`/32 host LOCAL`); the LOCAL ones are this host's own addresses.
 */
export function localPrefixesOf(fibTrie: string): string[] {
  const out = new Set<string>();
  let leaf: string | undefined;
  for (const line of fibTrie.split("\n")) {
    const l = /^\s*\|-- (\d+\.\d+\.\d+\.\d+)\s*$/.exec(line);
    if (l) {
      leaf = l[1];
      continue;
    }
    const p = /^\s*\/(\d+) \S+ LOCAL\b/.exec(line);
    if (p && leaf) out.add(`${leaf}/${p[1]}`);
  }
  return [...out];
}
