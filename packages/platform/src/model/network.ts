/**
 * A sandbox's network settings as its create (or, for egress, its last network update) gave
 * them: stored as given and echoed by GET, so what a client reads back is what is enforced.
 */

/** What a sandbox may reach. Omitted lists are empty: with nothing denied, everything is allowed. */
export interface EgressPolicy {
  /** `allow_internet_access` as sent; absent when never set. false denies everything not allowed. */
  allowInternetAccess?: boolean;
  /** IPs, CIDRs, domains and `*.` wildcards; an allow beats a deny. */
  allowOut: string[];
  /** IPs and CIDRs. */
  denyOut: string[];
  /**
   * Header transforms by domain (`name` or `*.name`, lower-cased), placeholders unresolved;
   * absent when none. They grant no access: the lists above decide first.
   */
  rules?: NetworkRules;
  /** The sandbox's own SOCKS5 proxy its outbound TCP is tunnelled through; absent when none. */
  egressProxy?: StoredEgressProxy;
}

/**
 * A sandbox's own SOCKS5 proxy ("bring your own proxy", `network.egressProxy`), after the
 * allow/deny decision. The store keeps its password sealed with the platform's secrets key,
 * bound to the sandbox (store/sealing.ts), so it survives pause, resume, fork and restart but
 * is never shown, logged or put in a message.
 */
export interface StoredEgressProxy {
  /** Canonical `host:port` (host lower-cased). */
  address: string;
  username?: string;
  password?: string;
}

/** A policy as it may be recorded or shown: the SOCKS5 proxy's password left out. */
export function withoutProxyPassword(p: EgressPolicy): EgressPolicy {
  if (p.egressProxy?.password === undefined) return p;
  const { password: _, ...proxy } = p.egressProxy;
  return { ...p, egressProxy: proxy };
}

/** One rule for the requests to a domain (E2B's `SandboxNetworkRule`). */
export interface NetworkRule {
  transform?: {
    /** Headers set on each request, replacing any of the same name; values may hold placeholders. */
    headers?: Record<string, string>;
    /**
     * An extension: placeholders are filled on plain HTTP (port 80) as well. Without it a
     * request over plain HTTP whose headers would carry a secret or an identity token is refused.
     */
    allowPlainHttp?: boolean;
  };
}

/** Transform rules by domain; at most one rule per domain. */
export type NetworkRules = Record<string, NetworkRule[]>;

/** How the sandbox's own URLs are served through the proxy. */
export interface IngressPolicy {
  /** false: every port but envd's needs the sandbox's traffic access token. */
  allowPublicTraffic: boolean;
  /** The Host header requests are sent upstream with; `${PORT}` stands for the port. */
  maskRequestHost?: string;
  /** Ports the proxy speaks TLS to. */
  httpsPorts: number[];
}

export const OPEN_EGRESS: EgressPolicy = { allowOut: [], denyOut: [] };
export const PUBLIC_INGRESS: IngressPolicy = { allowPublicTraffic: true, httpsPorts: [] };

/** Whether the policy lets everything out untouched (nothing listed, internet not turned off, no rules). */
export function isOpenEgress(p: EgressPolicy): boolean {
  return (
    p.allowInternetAccess !== false &&
    p.allowOut.length === 0 &&
    p.denyOut.length === 0 &&
    Object.keys(p.rules ?? {}).length === 0 &&
    !p.egressProxy
  );
}
