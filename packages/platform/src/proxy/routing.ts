import { createHash, timingSafeEqual } from "node:crypto";
import { ENVD_PORT } from "@x/envd-client";

/** envd's port inside every sandbox: the default when only `E2b-Sandbox-Id` is sent. */
export { ENVD_PORT };

export interface ProxyTarget {
  sandboxID: string;
  port: number;
}

const SANDBOX_ID = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const PORT = /^[0-9]{1,5}$/;

function parsePort(text: string): number | undefined {
  if (!PORT.test(text)) return undefined;
  const port = Number(text);
  return port >= 1 && port <= 65535 ? port : undefined;
}

/** A repeated header arrives joined with ", "; the first value is the one meant. */
function firstValue(value: string | string[] | undefined): string | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined) return undefined;
  const comma = text.indexOf(",");
  return (comma < 0 ? text : text.slice(0, comma)).trim();
}

/**
 * Picks the sandbox and port of a request: the headers `E2b-Sandbox-Id` / `E2b-Sandbox-Port`
 * when present (what the e2b client sends when every envd call goes to one URL), else the
 * first label of the host, `{port}-{sandboxID}`, under any domain.
 */
export function parseTarget(
  idHeader: string | string[] | undefined,
  portHeader: string | string[] | undefined,
  host: string | undefined,
): ProxyTarget | undefined {
  const headerID = firstValue(idHeader);
  if (headerID) {
    const portText = firstValue(portHeader);
    const port = portText ? parsePort(portText) : ENVD_PORT;
    return port !== undefined && SANDBOX_ID.test(headerID) ? { sandboxID: headerID, port } : undefined;
  }
  if (!host) return undefined;
  let end = host.indexOf(".");
  if (end < 0) end = host.indexOf(":");
  const label = end < 0 ? host : host.slice(0, end);
  const dash = label.indexOf("-");
  if (dash < 1) return undefined;
  const port = parsePort(label.slice(0, dash));
  const sandboxID = label.slice(dash + 1);
  return port !== undefined && SANDBOX_ID.test(sandboxID) ? { sandboxID, port } : undefined;
}

/**
 * A signed file URL (`/files?path=…&signature=v1_…`) names no sandbox: with `E2B_SANDBOX_URL`
 * set, the e2b client's `downloadUrl`/`uploadUrl` all point at the proxy's one URL. The
 * signature is sha256 over `path:operation:username:envdAccessToken[:expiration]` (envd's own
 * check), so only the sandbox whose token made it matches. Returns that match, for the
 * resolver to try against the tokens of the running sandboxes, or undefined when the request
 * is not a signed file request. Expiry is left to envd, which answers it with its own 401.
 * Its `key` names what was signed and the signature: two requests of one key match the same token.
 */
export function signedFileMatcher(method: string, url: string): SignedFileMatch | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url, "http://proxy");
  } catch {
    return undefined;
  }
  if (parsed.pathname !== "/files") return undefined;
  const query = parsed.searchParams;
  const signature = query.get("signature");
  if (!signature?.startsWith("v1_")) return undefined;
  const operation =
    method === "GET" || method === "HEAD"
      ? "read"
      : method === "POST" || method === "PUT"
        ? "write"
        : undefined;
  if (!operation) return undefined;
  const expiration = query.get("signature_expiration");
  const head = `${query.get("path") ?? ""}:${operation}:${query.get("username") ?? ""}:`;
  const tail = expiration !== null ? `:${expiration}` : "";
  const sent = Buffer.from(signature);
  const matches = (token: string) => {
    const expected = `v1_${createHash("sha256")
      .update(head + token + tail)
      .digest("base64")
      .replace(/=+$/, "")}`;
    const b = Buffer.from(expected);
    return sent.length === b.length && timingSafeEqual(sent, b);
  };
  return Object.assign(matches, { key: JSON.stringify([head, tail, signature]) });
}

/** Whether an envd access token signed a request, and what names the request (`key`). */
export type SignedFileMatch = ((envdAccessToken: string) => boolean) & { readonly key: string };
