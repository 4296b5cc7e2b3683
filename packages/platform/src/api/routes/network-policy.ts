import type { Schemas } from "@x/platform-client";
import { invalid } from "../../model/errors.js";

/** The egress part of a network configuration, as create and `PUT /network` send it. */
export type EgressConfig = Schemas["SandboxNetworkUpdateConfig"];

/** The rest of a create request's `network`: how the sandbox's own URLs are served. */
export type IngressConfig = Pick<
  Schemas["SandboxNetworkConfig"],
  "allowPublicTraffic" | "maskRequestHost" | "httpsPorts"
>;

const EVERYWHERE = new Set(["0.0.0.0/0", "::/0"]);

function unsupported(what: string): never {
  throw invalid(
    `${what} is not supported by this server yet: it can only turn a sandbox's internet access on or off ` +
      '(allow_internet_access, or denyOut: ["0.0.0.0/0"])',
  );
}

/**
 * Whether the sandbox may reach the internet under this configuration. Parts this server
 * cannot enforce are refused with 400 rather than accepted and ignored. Omitted fields mean
 * no restriction, so an empty configuration allows the internet.
 */
export function internetAccess(egress: EgressConfig, ingress: IngressConfig = {}): boolean {
  if (egress.allowOut?.length) unsupported("allowOut (egress allow lists)");
  if (egress.egressProxy) unsupported("egressProxy");
  if (egress.rules && Object.keys(egress.rules).length > 0)
    unsupported("rules (per-domain request transforms)");
  if (ingress.allowPublicTraffic === false) unsupported("allowPublicTraffic: false (traffic access tokens)");
  if (ingress.maskRequestHost !== undefined) unsupported("maskRequestHost");
  if (ingress.httpsPorts?.length) unsupported("httpsPorts");
  const denyOut = egress.denyOut ?? [];
  const denyAll = denyOut.some((d) => EVERYWHERE.has(d));
  if (denyOut.some((d) => !EVERYWHERE.has(d)))
    unsupported("denyOut other than 0.0.0.0/0 (egress deny lists)");
  if (denyAll && egress.allow_internet_access === true) {
    throw invalid('allow_internet_access: true contradicts denyOut: ["0.0.0.0/0"]');
  }
  return !denyAll && egress.allow_internet_access !== false;
}
