import { getDomain } from "tldts";
import { invalid } from "../model/errors.js";
import type { NetworkRules } from "../model/network.js";
import { parseHeaderTemplate, secretNamesIn, type TemplatePart } from "../model/placeholders.js";

/** E2B's limits on `network.rules` (infra `sandbox_create.go`). */
export const RULE_LIMITS = {
  domains: 10,
  rulesPerDomain: 1,
  domainLength: 128,
  headersPerRule: 20,
  headerNameLength: 64,
  headerValueLength: 2048,
  secretsPerDomain: 32,
} as const;

/** An RFC 7230 token (a header name). */
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
/** A DNS name (labels of letters, digits, `-` and `_`, not starting or ending with `-`). */
const DNS_NAME = /^([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.?$/;

/**
 * Checks `network.rules` with E2B's limits and 400 messages and returns them as stored: keys
 * lower-cased, rules as given (placeholders unresolved). Undefined when there are none.
 */
export function networkRules(rules: NetworkRules | undefined): NetworkRules | undefined {
  if (!rules) return undefined;
  const L = RULE_LIMITS;
  const entries = Object.entries(rules);
  if (entries.length > L.domains) throw invalid(`Network rules can have at most ${L.domains} domains.`);
  const out: NetworkRules = {};
  for (const [given, list] of entries) {
    const q = JSON.stringify(given);
    if (given.length === 0) throw invalid("Rule domain must not be empty.");
    if (given.length > L.domainLength)
      throw invalid(`Rule domain ${q} exceeds maximum length of ${L.domainLength} characters.`);
    const domain = given.toLowerCase();
    if (!DNS_NAME.test(domain.startsWith("*.") ? domain.slice(2) : domain))
      throw invalid(`Rule domain ${q} is not a valid domain name.`);
    const all = [...(out[domain] ?? []), ...(list ?? [])];
    if (all.length > L.rulesPerDomain)
      throw invalid(`Domain ${q} can have at most ${L.rulesPerDomain} transform rule.`);
    const secrets = new Set<string>();
    let placeholders = false;
    for (const rule of list ?? []) {
      const plain = rule?.transform?.allowPlainHttp;
      if (plain !== undefined && typeof plain !== "boolean")
        throw invalid(`allowPlainHttp in rule for domain ${q} must be true or false.`);
      const headers = Object.entries(rule?.transform?.headers ?? {});
      if (headers.length > L.headersPerRule)
        throw invalid(`Domain ${q} can have at most ${L.headersPerRule} headers per rule.`);
      for (const [name, value] of headers) {
        const n = JSON.stringify(name);
        if (name.length === 0) throw invalid(`Header name in rule for domain ${q} must not be empty.`);
        if (!TOKEN.test(name))
          throw invalid(`Header name ${n} in rule for domain ${q} must not contain CR or LF characters.`);
        if (name.length > L.headerNameLength)
          throw invalid(
            `Header name ${n} in rule for domain ${q} exceeds maximum length of ${L.headerNameLength} characters.`,
          );
        if (typeof value !== "string" || /[\r\n]/.test(value))
          throw invalid(
            `Value for header ${n} in rule for domain ${q} must not contain CR or LF characters.`,
          );
        if (!isHeaderValue(value))
          throw invalid(`Value for header ${n} in rule for domain ${q} must be a valid HTTP header value.`);
        if (value.length > L.headerValueLength)
          throw invalid(
            `Value for header ${n} in rule for domain ${q} exceeds maximum length of ${L.headerValueLength} characters.`,
          );
        const parts = parseHeaderTemplate(value);
        for (const s of secretNamesIn(parts)) secrets.add(s);
        if (parts.some((p) => typeof p !== "string")) placeholders = true;
      }
    }
    const suffix = domain.startsWith("*.") ? domain.slice(2) : undefined;
    if (suffix && placeholders && onPublicSuffix(suffix))
      throw invalid(
        `Rule domain ${q} is a wildcard on the public suffix ${suffix}: every site under it belongs to whoever registers it, so its secrets and identity tokens would go to any of them; name the host instead.`,
      );
    if (secrets.size > L.secretsPerDomain)
      throw invalid(`Domain ${q} can refer to at most ${L.secretsPerDomain} distinct secrets.`);
    out[domain] = all;
  }
  return Object.keys(out).length > 0 ? out : undefined;
}

/** A domain's rule as the egress proxy applies it: headers to set, their values parsed. */
export interface TransformRule {
  /** The key it was given under (`name` or `*.name`). */
  domain: string;
  headers: Array<{ name: string; value: TemplatePart[] }>;
  /** Placeholders filled on plain HTTP (port 80) too: only when the rule says so (an extension). */
  allowPlainHttp: boolean;
}

/** A sandbox's rules, ready for matching. */
export interface Transforms {
  exact: ReadonlyMap<string, TransformRule>;
  /** `*.name` rules, longest suffix first. */
  wildcards: readonly TransformRule[];
}

/** The rules of a policy for matching; undefined when it has none. */
export function compileTransforms(rules: NetworkRules | undefined): Transforms | undefined {
  const exact = new Map<string, TransformRule>();
  const wildcards: TransformRule[] = [];
  for (const [domain, list] of Object.entries(rules ?? {})) {
    const headers = Object.entries(list[0]?.transform?.headers ?? {}).map(([name, value]) => ({
      name,
      value: parseHeaderTemplate(value),
    }));
    const rule = { domain, headers, allowPlainHttp: list[0]?.transform?.allowPlainHttp === true };
    if (domain.startsWith("*.")) wildcards.push(rule);
    else exact.set(domain, rule);
  }
  if (exact.size === 0 && wildcards.length === 0) return undefined;
  wildcards.sort((a, b) => b.domain.length - a.domain.length);
  return { exact, wildcards };
}

/**
 * The rule for a host name: an exact one first, else the longest matching `*.` suffix
 * (subdomains at any depth, not the apex). Rule sets are not merged.
 */
export function matchTransform(t: Transforms | undefined, name: string): TransformRule | undefined {
  if (!t) return undefined;
  const host = name.toLowerCase().replace(/\.$/, "");
  return t.exact.get(host) ?? t.wildcards.find((w) => host.endsWith(w.domain.slice(1)));
}

/** The Public Suffix List's view, private (shared hosting) suffixes included: `github.io` is one. */
const PSL = { allowPrivateDomains: true } as const;

/**
 * Whether a name is a public suffix (`com`, `co.uk`, `github.io`, `s3.amazonaws.com`, an
 * unknown TLD): names under it are registered by different owners.
 */
export function onPublicSuffix(name: string): boolean {
  return getDomain(name, PSL) === null;
}

/**
 * Whether a `*.suffix` rule's placeholders may be filled for `host`: the host's registrable
 * domain is the suffix's own or above it, never a site registered beneath it. `*.amazonaws.com`
 * matches `bucket.s3.amazonaws.com`, whose registrable domain (s3.amazonaws.com being a public
 * suffix) is the bucket's owner's, not Amazon's.
 */
export function wildcardOwnsHost(suffix: string, host: string): boolean {
  const registrable = getDomain(host.toLowerCase().replace(/\.$/, ""), PSL);
  return registrable !== null && (registrable === suffix || suffix.endsWith(`.${registrable}`));
}

/**
 * Request headers (Node's `rawHeaders`: name, value, name, value…) with `set` put in: every
 * header of a name in `set` (any case) is replaced by the one given.
 */
export function replaceHeaders(raw: readonly string[], set: ReadonlyArray<[string, string]>): string[] {
  const replaced = new Set(set.map(([name]) => name.toLowerCase()));
  const out: string[] = [];
  for (let i = 0; i + 1 < raw.length; i += 2) {
    if (!replaced.has(raw[i]!.toLowerCase())) out.push(raw[i]!, raw[i + 1]!);
  }
  for (const [name, value] of set) out.push(name, value);
  return out;
}

/** Whether `value` may be sent as an HTTP header value: Latin-1, no control character but tab. */
export function isHeaderValue(value: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  return !/[\u0000-\u0008\u000a-\u001f\u007f]|[^\u0000-\u00ff]/.test(value);
}
