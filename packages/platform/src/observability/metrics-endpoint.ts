import { createHash, timingSafeEqual } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { EXPOSITION_CONTENT_TYPE, type Registry } from "./metrics.js";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export const METRICS_PATH = "/metrics";

/**
 * The metrics token kept in `file` (`x serve --metrics-token-file`): its text, surrounding
 * whitespace dropped. Refuses an empty file, which would stand for no token at all.
 */
export async function readMetricsToken(file: string): Promise<string> {
  const token = (await readFile(file, "utf8")).trim();
  if (!token) throw new Error(`the metrics token file ${file} is empty: put the scrape token in it`);
  if (/\s/.test(token))
    throw new Error(`the metrics token in ${file} has whitespace inside: one token, one line`);
  return token;
}

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
function bearerMatches(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? "";
  const m = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (!m) return false;
  // hashes of equal length, so the comparison tells nothing of the token's length either
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(m[1]!), digest(token));
}

/**
 * Serves `GET /metrics` (Prometheus text format) beside another listener, ahead of its routing:
 * the scrape endpoint is not an API operation. With a `token`, a scrape must show it as a
 * bearer token (401 otherwise) and sees every label, template ids included; without one the
 * endpoint is anonymous and shows no label that identifies a tenant (metrics.ts TENANT_LABELS).
 */
export function withMetricsEndpoint(
  registry: Registry,
  next: Listener,
  onError: (err: unknown) => void,
  token?: string,
): Listener {
  return (req, res) => {
    const pathname = (req.url ?? "").split("?")[0];
    if (pathname !== METRICS_PATH || (req.method !== "GET" && req.method !== "HEAD")) return next(req, res);
    if (token !== undefined && !bearerMatches(req, token)) {
      const body = JSON.stringify({
        code: 401,
        message: "/metrics needs the platform's metrics token: send it as 'Authorization: Bearer <token>'",
      });
      res.writeHead(401, {
        "Content-Type": "application/json",
        "Content-Length": String(Buffer.byteLength(body)),
        "WWW-Authenticate": 'Bearer realm="metrics"',
      });
      res.end(req.method === "HEAD" ? undefined : body);
      return;
    }
    registry.render({ tenantLabels: token !== undefined }).then(
      (text) => {
        res.writeHead(200, {
          "Content-Type": EXPOSITION_CONTENT_TYPE,
          "Content-Length": String(Buffer.byteLength(text)),
        });
        res.end(req.method === "HEAD" ? undefined : text);
      },
      (err: unknown) => {
        onError(err);
        res.writeHead(500, { "Content-Type": "text/plain" });
        res.end("metrics collection failed\n");
      },
    );
  };
}
