import { isIP } from "node:net";
import { ENVD_PORT } from "@x/envd-client";
import type { Schemas } from "@x/platform-client";
import { invalid } from "../../model/errors.js";
import type { IngressPolicy } from "../../model/network.js";

/** The part of a create request's `network` that says how the sandbox's own URLs are served. */
export type IngressConfig = Pick<
  Schemas["SandboxNetworkConfig"],
  "allowPublicTraffic" | "maskRequestHost" | "httpsPorts"
>;

const MAX_HTTPS_PORTS = 128;
const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)(\.[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?)*\.?$/i;

/** `host` or `host:port` (with `${PORT}` for the port the request is for). */
function checkMaskRequestHost(mask: string): void {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII is exactly what is checked
  if (!/^[\x00-\x7f]*$/.test(mask)) {
    throw invalid(`mask request host ${mask} is not ASCII. Please use ASCII characters only.`);
  }
  const text = mask.replaceAll("${PORT}", "1");
  const bracketed = /^\[([^\]]+)\](?::(\d+))?$/.exec(text);
  const [host, port] = bracketed
    ? [bracketed[1]!, bracketed[2]]
    : ((m) => (m ? [m[1]!, m[2]] : [text, undefined]))(/^([^:]+):(\d+)$/.exec(text));
  const hostOk = bracketed ? isIP(host) === 6 : isIP(host) === 4 || HOST_NAME.test(host);
  const portOk = port === undefined || (Number(port) >= 1 && Number(port) <= 65535);
  if (!hostOk || !portOk) {
    throw invalid(
      `mask request host is not valid: ${mask} (a host name or IP, optionally :port or :\${PORT})`,
    );
  }
}

function checkHttpsPorts(ports: number[]): void {
  if (ports.length > MAX_HTTPS_PORTS)
    throw invalid(`httpsPorts lists ${ports.length} ports; at most ${MAX_HTTPS_PORTS}`);
  for (const port of ports) {
    if (!Number.isInteger(port) || port < 1 || port > 65535)
      throw invalid(`httpsPorts: ${port} is not a port (1-65535)`);
    if (port === ENVD_PORT) throw invalid(`httpsPorts: ${ENVD_PORT} is envd's port and cannot be listed`);
  }
  if (new Set(ports).size !== ports.length) throw invalid("httpsPorts lists a port more than once");
}

/**
 * Checks the ingress settings of a create and returns them as stored: private sandboxes
 * (`allowPublicTraffic: false`: every port but envd's needs the sandbox's traffic access
 * token), the Host requests go upstream with, and the ports that serve HTTPS.
 */
export function ingressPolicy(config: IngressConfig = {}): IngressPolicy {
  if (config.maskRequestHost !== undefined) checkMaskRequestHost(config.maskRequestHost);
  const httpsPorts = config.httpsPorts ?? [];
  checkHttpsPorts(httpsPorts);
  return {
    allowPublicTraffic: config.allowPublicTraffic !== false,
    ...(config.maskRequestHost !== undefined ? { maskRequestHost: config.maskRequestHost } : {}),
    httpsPorts,
  };
}
