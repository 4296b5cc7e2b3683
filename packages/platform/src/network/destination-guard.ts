import { lookup as dnsLookup } from "node:dns/promises";
import { BlockList, isIP, type LookupFunction } from "node:net";
import os from "node:os";
import { ALWAYS_DENIED_IPV4 } from "./firewall.js";

/**
 * Whether the platform may open a connection, from the host, to a host a tenant named (a
 * registry of `fromImage`, a webhook's URL): the host's own networks are not the tenants' to
 * reach. The address ranges are the sandboxes' (`ALWAYS_DENIED_IPV4`: private, CGNAT,
 * loopback, link-local with cloud metadata, 0.0.0.0/8, multicast and reserved), their IPv6
 * counterparts, IPv4 embedded in IPv6 (mapped, NAT64, 6to4) judged as that IPv4, and this
 * host's own addresses. Only what the operator allows (by name or range) passes.
 */

/** Why an address is not for tenants. */
export type AddressClass =
  | "loopback"
  | "link-local"
  | "private"
  | "cgnat"
  | "unspecified"
  | "multicast"
  | "reserved"
  /** One of this host's own addresses (any interface's). */
  | "host";

/** How each class reads in a message. */
const CLASS_TEXT: Record<AddressClass, string> = {
  loopback: "a loopback address",
  "link-local": "a link-local address",
  private: "a private address",
  cgnat: "a CGNAT address",
  unspecified: "an unspecified address",
  multicast: "a multicast address",
  reserved: "a reserved address",
  host: "an address of this host",
};

/** Labels for the sandbox ranges; a range added there without a label here counts as reserved. */
const IPV4_CLASS: Record<string, AddressClass> = {
  "0.0.0.0/8": "unspecified",
  "10.0.0.0/8": "private",
  "100.64.0.0/10": "cgnat",
  "127.0.0.0/8": "loopback",
  "169.254.0.0/16": "link-local",
  "172.16.0.0/12": "private",
  "192.168.0.0/16": "private",
  "224.0.0.0/3": "multicast",
};

const IPV4_DENIED = ALWAYS_DENIED_IPV4.map((cidr) => {
  const [net, bits] = cidr.split("/");
  const list = new BlockList();
  list.addSubnet(net!, Number(bits), "ipv4");
  return { list, kind: IPV4_CLASS[cidr] ?? ("reserved" as AddressClass) };
});

/** IPv6 ranges by first match; what lies outside 2000::/3 (global unicast) is reserved anyway. */
const IPV6_DENIED: Array<{ net: string; bits: number; kind: AddressClass }> = [
  { net: "::", bits: 128, kind: "unspecified" },
  { net: "::1", bits: 128, kind: "loopback" },
  { net: "fe80::", bits: 10, kind: "link-local" },
  { net: "fc00::", bits: 7, kind: "private" },
  // site-local: deprecated, still routed inside some networks
  { net: "fec0::", bits: 10, kind: "private" },
  { net: "ff00::", bits: 8, kind: "multicast" },
  // IETF protocol assignments (Teredo, ORCHID, …), documentation
  { net: "2001::", bits: 23, kind: "reserved" },
  { net: "2001:db8::", bits: 32, kind: "reserved" },
  { net: "3fff::", bits: 20, kind: "reserved" },
];
const IPV6_LISTS = IPV6_DENIED.map((r) => {
  const list = new BlockList();
  list.addSubnet(r.net, r.bits, "ipv6");
  return { list, kind: r.kind };
});
const GLOBAL_UNICAST = new BlockList();
GLOBAL_UNICAST.addSubnet("2000::", 3, "ipv6");

/** The 16 bytes of an IPv6 address (with any zone id dropped); undefined when it is not one. */
export function ipv6Bytes(ip: string): Uint8Array | undefined {
  let text = ip.replace(/%.*$/, "");
  if (isIP(text) !== 6) return undefined;
  // a trailing dotted quad (`::ffff:1.2.3.4`) as the two groups it is
  const quad = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (quad) {
    const [a, b, c, d] = quad.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, quad.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [left, right] = text.includes("::") ? text.split("::") : [text, undefined];
  const l = left ? left.split(":") : [];
  const r = right ? right.split(":") : [];
  const groups = right === undefined ? l : [...l, ...Array<string>(8 - l.length - r.length).fill("0"), ...r];
  const bytes = new Uint8Array(16);
  groups.forEach((g, i) => {
    const n = Number.parseInt(g, 16);
    bytes[i * 2] = n >> 8;
    bytes[i * 2 + 1] = n & 0xff;
  });
  return bytes;
}

const v4Of = (b: Uint8Array, at: number) => `${b[at]}.${b[at + 1]}.${b[at + 2]}.${b[at + 3]}`;

/**
 * The IPv4 address an IPv6 one stands for, where a connection to it ends at that IPv4:
 * IPv4-mapped (`::ffff:a.b.c.d`), the NAT64 well-known prefix (`64:ff9b::/96`) and 6to4
 * (`2002:AABB:CCDD::/48`).
 */
export function embeddedIpv4(ip: string): string | undefined {
  const b = ipv6Bytes(ip);
  if (!b) return undefined;
  const zeros = (from: number, to: number) => b.slice(from, to).every((x) => x === 0);
  if (zeros(0, 10) && b[10] === 0xff && b[11] === 0xff) return v4Of(b, 12);
  if (b[0] === 0x00 && b[1] === 0x64 && b[2] === 0xff && b[3] === 0x9b && zeros(4, 12)) return v4Of(b, 12);
  if (b[0] === 0x20 && b[1] === 0x02) return v4Of(b, 2);
  return undefined;
}

/** The host's own addresses (every interface's), as the kernel has them now. */
function ownAddresses(): BlockList {
  const list = new BlockList();
  for (const infos of Object.values(os.networkInterfaces())) {
    for (const info of infos ?? []) {
      const address = info.address.replace(/%.*$/, "");
      list.addAddress(address, info.family === "IPv6" ? "ipv6" : "ipv4");
    }
  }
  return list;
}

/**
 * Why the platform must not connect to `ip` for a tenant, or undefined when it may: the
 * sandboxes' forbidden ranges, their IPv6 counterparts, IPv4 embedded in IPv6 as that IPv4,
 * and this host's own addresses.
 */
export function classifyAddress(ip: string, own: BlockList = ownAddresses()): AddressClass | undefined {
  const text = ip.replace(/%.*$/, "");
  const family = isIP(text);
  if (family === 4) {
    const denied = IPV4_DENIED.find((r) => r.list.check(text, "ipv4"));
    if (denied) return denied.kind;
    return own.check(text, "ipv4") ? "host" : undefined;
  }
  if (family !== 6) return "reserved";
  const v4 = embeddedIpv4(text);
  if (v4 !== undefined) return classifyAddress(v4, own);
  const denied = IPV6_LISTS.find((r) => r.list.check(text, "ipv6"));
  if (denied) return denied.kind;
  if (!GLOBAL_UNICAST.check(text, "ipv6")) return "reserved";
  return own.check(text, "ipv6") ? "host" : undefined;
}

/** One thing the operator allows: a host by name, or an address range; either on one port or all. */
export type DestinationRule =
  | { kind: "name"; name: string; port?: number }
  | { kind: "range"; list: BlockList; port?: number };

/** A name lower-cased, without the root's trailing dot. */
const normalName = (name: string) => name.toLowerCase().replace(/\.$/, "");

/**
 * A host as a connection would name it: brackets of an IPv6 literal dropped, IPv4 in any of the
 * forms WHATWG URLs and inet_aton accept (`2130706433`, `0x7f.1`, `127.1`) as a dotted quad,
 * names lower-cased.
 */
export function canonicalHost(host: string): string {
  const bare = host.replace(/^\[(.*)\]$/, "$1");
  if (isIP(bare.replace(/%.*$/, "")) !== 0) return bare;
  if (/^[0-9a-fA-FxX.]+$/.test(bare)) {
    try {
      const parsed = new URL(`http://${bare}/`).hostname;
      if (isIP(parsed) === 4) return parsed;
    } catch {
      // not a host at all: judged as a name, which will not resolve
    }
  }
  return normalName(bare);
}

/**
 * Parses the operator's allowances: `HOST`, `HOST:PORT`, `IP`, `IP:PORT`, `[IPv6]:PORT` or a
 * CIDR (`10.1.2.0/24`, `fd00::/8`). Throws naming `what` for anything else.
 */
export function destinationRules(entries: readonly string[], what: string): DestinationRule[] {
  return entries.map((raw) => {
    const entry = raw.trim();
    const fail = () =>
      new Error(`${what} '${raw}' is not HOST, HOST:PORT, IP, IP:PORT, [IPv6]:PORT or a CIDR (10.1.2.0/24)`);
    const cidr = /^([^/]+)\/(\d{1,3})$/.exec(entry);
    if (cidr) {
      const family = isIP(cidr[1]!);
      const bits = Number(cidr[2]);
      if (family === 0 || bits > (family === 4 ? 32 : 128)) throw fail();
      const list = new BlockList();
      list.addSubnet(cidr[1]!, bits, family === 4 ? "ipv4" : "ipv6");
      return { kind: "range", list };
    }
    const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d{1,5}))?$/.exec(entry);
    const host = isIP(entry) === 6 ? entry : (m?.[1] ?? m?.[2]);
    const port = isIP(entry) === 6 || m?.[3] === undefined ? undefined : Number(m[3]);
    if (!host || (port !== undefined && (port < 1 || port > 65535))) throw fail();
    const family = isIP(host);
    if (m?.[1] !== undefined && family !== 6) throw fail();
    const onPort = port === undefined ? {} : { port };
    if (family !== 0) {
      const list = new BlockList();
      list.addAddress(host, family === 4 ? "ipv4" : "ipv6");
      return { kind: "range", list, ...onPort };
    }
    if (
      !/^[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*\.?$/.test(
        host,
      )
    )
      throw fail();
    return { kind: "name", name: normalName(host), ...onPort };
  });
}

/** What the guard decided for `host:port`. */
export type DestinationCheck =
  | {
      allowed: true;
      /** Where to connect: these addresses and no others (the checked answers, in their order). */
      addresses: string[];
    }
  | {
      allowed: false;
      /** The host is an address itself (else a name that resolved to one of this class). */
      literal: boolean;
      kind: AddressClass;
    };

/** A name that could not be resolved (its `code`, e.g. ENOTFOUND, says why). */
export class ResolveError extends Error {
  constructor(
    readonly host: string,
    readonly code: string,
  ) {
    super(`cannot resolve ${host}: ${code}`);
    this.name = "ResolveError";
  }
}

export interface DestinationGuardOptions {
  /** What the operator allows beyond public addresses. */
  allow: readonly DestinationRule[];
  /** Every address of a name (A and AAAA); the host's resolver (getaddrinfo: /etc/hosts, resolv.conf) when unset. */
  resolve?(name: string): Promise<string[]>;
}

async function hostResolve(name: string): Promise<string[]> {
  const answers = await dnsLookup(name, { all: true, verbatim: true });
  return answers.map((a) => a.address);
}

/** Decides, and resolves, the hosts the platform connects to for tenants; see the top of this file. */
export class DestinationGuard {
  private readonly resolveName: (name: string) => Promise<string[]>;

  constructor(private readonly o: DestinationGuardOptions) {
    this.resolveName = o.resolve ?? hostResolve;
  }

  /** Whether the operator allowed this host by its name (then any address it resolves to is fine). */
  allowsName(host: string, port: number): boolean {
    const name = canonicalHost(host);
    return this.o.allow.some((r) => r.kind === "name" && r.name === name && (r.port ?? port) === port);
  }

  private allowsAddress(ip: string, port: number): boolean {
    const text = ip.replace(/%.*$/, "");
    const family = isIP(text) === 6 ? "ipv6" : "ipv4";
    const v4 = family === "ipv6" ? embeddedIpv4(text) : undefined;
    return this.o.allow.some(
      (r) =>
        r.kind === "range" &&
        (r.port ?? port) === port &&
        (r.list.check(text, family) || (v4 !== undefined && r.list.check(v4, "ipv4"))),
    );
  }

  /**
   * Resolves `host` (an address is itself; `localhost` and `*.localhost` are loopback without
   * asking DNS) and decides: every answer must be allowed, by the operator's rules or by being
   * public. Rejects with ResolveError when the name has no address.
   */
  async check(host: string, port: number): Promise<DestinationCheck> {
    const name = canonicalHost(host);
    const literal = isIP(name.replace(/%.*$/, "")) !== 0;
    let addresses: string[];
    if (literal) addresses = [name];
    else if (name === "localhost" || name.endsWith(".localhost")) addresses = ["127.0.0.1", "::1"];
    else {
      try {
        addresses = await this.resolveName(name);
      } catch (err) {
        throw new ResolveError(name, (err as NodeJS.ErrnoException).code ?? "ENOTFOUND");
      }
      if (addresses.length === 0) throw new ResolveError(name, "ENOTFOUND");
    }
    if (!literal && this.allowsName(name, port)) return { allowed: true, addresses };
    const own = ownAddresses();
    for (const address of addresses) {
      const kind = classifyAddress(address, own);
      if (kind !== undefined && !this.allowsAddress(address, port)) return { allowed: false, literal, kind };
    }
    return { allowed: true, addresses };
  }
}

/**
 * A `lookup` for http(s).request and net.connect that answers the addresses already checked
 * and no others (all of them when asked for all, as happy eyeballs does; else the first).
 */
export function pinnedLookup(addresses: readonly string[]): LookupFunction {
  const answers = addresses.map((address) => ({ address, family: isIP(address) }));
  return (_hostname, options, callback) => {
    if (options.all) callback(null, answers);
    else callback(null, answers[0]!.address, answers[0]!.family);
  };
}

/** How a refusal reads in a message: "127.0.0.1 is a loopback address", "'x.lan' resolves to a private address". */
export function describeRefusal(host: string, check: Extract<DestinationCheck, { allowed: false }>): string {
  const what = CLASS_TEXT[check.kind];
  return check.literal ? `${canonicalHost(host)} is ${what}` : `'${canonicalHost(host)}' resolves to ${what}`;
}
