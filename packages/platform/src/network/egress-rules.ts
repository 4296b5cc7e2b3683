import { BlockList, isIPv4 } from "node:net";
import type { EgressPolicy, StoredEgressProxy } from "../model/network.js";
import { intToIp, ipToInt } from "./address-pool.js";
import { compileTransforms, type Transforms } from "./transforms.js";

/**
 * A sandbox's egress policy as the firewall, the DNS service and the egress proxy enforce it.
 * Decision order (the hosted service's): an allowed name or an allowed address lets the
 * connection out; otherwise a denied address stops it; otherwise it goes out. Private,
 * loopback, link-local and CGNAT destinations are refused before any of this (firewall.ts).
 * Only IPv4 is listed: sandboxes have no IPv6 route at all.
 */
export interface EgressRules {
  /** IPv4 CIDRs, canonical, none inside another of the list. */
  allow: string[];
  deny: string[];
  /** Lowercase `name`, `*.name` or `*`. */
  domains: string[];
  /** Header transforms by name; with them, TCP to ports 80 and 443 goes to the egress proxy. */
  transforms?: Transforms;
  /** The sandbox's own SOCKS5 proxy: with it, all its outbound TCP goes to the egress proxy. */
  socks?: StoredEgressProxy;
}

/** Everything allowed. */
export const OPEN_RULES: EgressRules = { allow: [], deny: [], domains: [] };

export function egressRules(p: EgressPolicy): EgressRules {
  const allow: string[] = [];
  const domains: string[] = [];
  for (const entry of p.allowOut) {
    const cidr = ipv4Cidr(entry);
    if (cidr) allow.push(cidr);
    else if (!isAddressLike(entry)) domains.push(entry.toLowerCase());
  }
  const deny = p.denyOut.map(ipv4Cidr).filter((c): c is string => c !== undefined);
  if (p.allowInternetAccess === false) deny.push("0.0.0.0/0");
  const transforms = compileTransforms(p.rules);
  return {
    allow: outermost(allow),
    deny: outermost(deny),
    domains: [...new Set(domains)],
    ...(transforms ? { transforms } : {}),
    ...(p.egressProxy ? { socks: p.egressProxy } : {}),
  };
}

/** Whether the rules deny every address they do not allow (so names must be allowed to resolve). */
export function deniesEverything(r: EgressRules): boolean {
  return r.deny.includes("0.0.0.0/0");
}

/** The allowed pattern a host name matches, if any: exact, `*.` suffix at any depth (not the apex), or `*`. */
export function allowedDomain(r: EgressRules, name: string): string | undefined {
  const host = name.toLowerCase().replace(/\.$/, "");
  return r.domains.find(
    (d) =>
      d === "*" ||
      d === host ||
      (d.startsWith("*.") && host.endsWith(d.slice(1)) && host.length > d.length - 1),
  );
}

/** The address decision for an IPv4 destination, as the firewall takes it (names aside). */
export function addressVerdict(r: EgressRules, ip: string): { allowed: boolean; rule: string } {
  const allow = r.allow.find((c) => inCidr(ip, c));
  if (allow) return { allowed: true, rule: `allowOut ${allow}` };
  const deny = r.deny.find((c) => inCidr(ip, c));
  if (deny) return { allowed: false, rule: `denyOut ${deny}` };
  return { allowed: true, rule: "default (not denied)" };
}

export function inCidr(ip: string, cidr: string): boolean {
  const [net, bits] = cidr.split("/");
  const list = new BlockList();
  list.addSubnet(net!, Number(bits ?? 32), "ipv4");
  return isIPv4(ip) && list.check(ip, "ipv4");
}

/** `1.2.3.4` or `1.2.3.0/24` as a canonical CIDR (host bits cleared); undefined for anything else. */
export function ipv4Cidr(entry: string): string | undefined {
  const [ip, bits = "32", ...rest] = entry.split("/");
  if (!ip || !isIPv4(ip) || rest.length > 0 || !/^\d{1,2}$/.test(bits) || Number(bits) > 32) return undefined;
  const n = Number(bits);
  const mask = n === 0 ? 0 : (~0 << (32 - n)) >>> 0;
  return `${intToIp((ipToInt(ip) & mask) >>> 0)}/${n}`;
}

/** IPv6 entries: valid, stored and echoed, but there is no IPv6 route to apply them to. */
function isAddressLike(entry: string): boolean {
  return entry.includes(":") || /^[\d./]+$/.test(entry);
}

/** The CIDRs of a list that no other of it contains (nftables refuses overlapping elements). */
function outermost(cidrs: string[]): string[] {
  const unique = [...new Set(cidrs)];
  return unique.filter(
    (c) =>
      !unique.some(
        (o) => o !== c && Number(o.split("/")[1]) < Number(c.split("/")[1]) && inCidr(c.split("/")[0]!, o),
      ),
  );
}
