import type { IncomingMessage, ServerResponse } from "node:http";
import { EXPOSITION_CONTENT_TYPE, type Registry } from "./metrics.js";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

export const METRICS_PATH = "/metrics";

/**
 * Serves `GET /metrics` (Prometheus text format) beside another listener, ahead of its routing:
 * the scrape endpoint is not an API operation. It carries no per-team data, so needs no key.
 */
export function withMetricsEndpoint(
  registry: Registry,
  next: Listener,
  onError: (err: unknown) => void,
): Listener {
  return (req, res) => {
    const pathname = (req.url ?? "").split("?")[0];
    if (pathname !== METRICS_PATH || (req.method !== "GET" && req.method !== "HEAD")) return next(req, res);
    registry.render().then(
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
