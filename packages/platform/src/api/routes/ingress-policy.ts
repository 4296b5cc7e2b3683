import type { Schemas } from "@x/platform-client";
import { invalid } from "../../model/errors.js";
import { type IngressPolicy, PUBLIC_INGRESS } from "../../model/network.js";

/** The part of a create request's `network` that says how the sandbox's own URLs are served. */
export type IngressConfig = Pick<
  Schemas["SandboxNetworkConfig"],
  "allowPublicTraffic" | "maskRequestHost" | "httpsPorts"
>;

function unsupported(what: string): never {
  throw invalid(`${what} is not supported by this server yet`);
}

/** Checks the ingress settings of a create and returns them as stored. */
export function ingressPolicy(config: IngressConfig = {}): IngressPolicy {
  if (config.allowPublicTraffic === false) unsupported("allowPublicTraffic: false (traffic access tokens)");
  if (config.maskRequestHost !== undefined) unsupported("maskRequestHost");
  if (config.httpsPorts?.length) unsupported("httpsPorts");
  return PUBLIC_INGRESS;
}
