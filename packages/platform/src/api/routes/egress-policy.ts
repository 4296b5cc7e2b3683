import { isIP } from "node:net";
import type { Schemas } from "@x/platform-client";
import { invalid } from "../../model/errors.js";
import type { EgressPolicy, StoredEgressProxy } from "../../model/network.js";
import { networkRules } from "../../network/transforms.js";

/** The egress part of a network configuration, as create and `PUT /network` send it. */
export type EgressConfig = Schemas["SandboxNetworkUpdateConfig"];

/** The literal that denies every destination (the client's ALL_TRAFFIC). */
export const ALL_TRAFFIC = "0.0.0.0/0";

/** A domain, `*.` and a domain, or `*`: labels of letters, digits, `-` and `_`. */
const DOMAIN =
  /^(\*|(\*\.)?([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)$/i;

/** An IP address or CIDR the way the hosted service accepts them: not the unspecified address. */
function isAddress(entry: string): boolean {
  if (entry === ALL_TRAFFIC) return true;
  const [ip, bits, ...rest] = entry.split("/");
  const family = isIP(ip ?? "");
  if (family === 0 || rest.length > 0) return false;
  if (bits !== undefined) {
    const n = Number(bits);
    if (!/^\d{1,3}$/.test(bits) || n > (family === 4 ? 32 : 128)) return false;
  }
  return !/^(0\.0\.0\.0|::|0:0:0:0:0:0:0:0)$/.test(ip ?? "");
}

/** Whether an allowOut entry parses as an address (else it is a domain). */
function looksLikeAddress(entry: string): boolean {
  const ip = entry.split("/")[0] ?? "";
  return isIP(ip) !== 0 || (entry.includes("/") && /^[0-9.:a-f]+$/i.test(ip));
}

/**
 * Checks an egress configuration the way the hosted service does, with its 400 messages, and
 * returns it as stored (and echoed by GET): entries as given, rules with their domains
 * lower-cased. `egressProxy` is the request's proxy as checkEgressProxy (network/byop.ts) made
 * it; a request with a proxy and no such check (a server without it) is refused, not ignored.
 * Unlike the hosted service, `allow_internet_access: false` is also accepted as the "deny
 * everything else" that allowed domains need, and domains are checked for shape.
 */
export function egressPolicy(config: EgressConfig, egressProxy?: StoredEgressProxy): EgressPolicy {
  if (config.egressProxy && !egressProxy) {
    throw invalid("egressProxy is not supported by this server: create the sandbox without it");
  }
  const allowOut = config.allowOut ?? [];
  const denyOut = config.denyOut ?? [];
  for (const entry of denyOut) {
    if (!isAddress(entry)) throw invalid(`invalid denied CIDR ${entry}`);
  }
  let domains = 0;
  for (const entry of allowOut) {
    if (looksLikeAddress(entry)) {
      if (!isAddress(entry)) throw invalid(`invalid allowed address ${entry}`);
    } else if (!DOMAIN.test(entry) || entry.length > 253) {
      throw invalid(`invalid allowed domain ${entry}: a name like api.example.com, *.example.com or *`);
    } else domains++;
  }
  if (domains > 0 && !denyOut.includes(ALL_TRAFFIC) && config.allow_internet_access !== false) {
    throw invalid(
      "When specifying allowed domains in allow out, you must include 'ALL_TRAFFIC' in deny out to block all other traffic.",
    );
  }
  const rules = networkRules(config.rules);
  return {
    ...(config.allow_internet_access !== undefined
      ? { allowInternetAccess: config.allow_internet_access }
      : {}),
    allowOut,
    denyOut,
    ...(rules ? { rules } : {}),
    ...(config.egressProxy && egressProxy ? { egressProxy } : {}),
  };
}
