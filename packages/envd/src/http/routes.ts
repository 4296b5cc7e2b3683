import type { EnvdContext } from "../context.js";
import { requireToken } from "./access.js";
import { drain } from "./body.js";
import { composeFiles } from "./compose.js";
import { downloadFile } from "./files-download.js";
import { uploadFiles } from "./files-upload.js";
import { createInitHandler } from "./init.js";
import { createMetricsSampler } from "./metrics.js";
import { HttpError, type HttpRequest, type HttpResponse, sendEmpty, sendError, sendJson } from "./respond.js";

type Handler = (req: HttpRequest, res: HttpResponse, query: URLSearchParams) => Promise<void>;

/**
 * envd's plain-HTTP routes (schemas/envd.yaml). connect-node hands over every request that
 * is not a Connect RPC, over HTTP/1.1 and h2c alike. Errors are `{message, code}` JSON.
 */
export function createHttpHandler(ctx: EnvdContext): (req: HttpRequest, res: HttpResponse) => void {
  const init = createInitHandler(ctx);
  const sampleMetrics = createMetricsSampler();
  const routes: Record<string, Record<string, Handler>> = {
    "/health": {
      GET: async (_req, res) => sendEmpty(res, 204),
    },
    "/envs": {
      GET: async (req, res) => {
        requireToken(ctx.state, req);
        sendJson(res, 200, ctx.state.envVars);
      },
    },
    "/metrics": {
      GET: async (req, res) => {
        requireToken(ctx.state, req);
        sendJson(res, 200, await sampleMetrics());
      },
    },
    "/init": { POST: init },
    "/files": {
      GET: (req, res, query) => downloadFile(ctx, req, res, query),
      POST: (req, res, query) => uploadFiles(ctx, req, res, query),
    },
    "/files/compose": {
      POST: (req, res) => composeFiles(ctx, req, res),
    },
  };

  const fail = (req: HttpRequest, res: HttpResponse, err: unknown) => {
    if (res.headersSent) {
      // Mid-body: the only honest signal left is a cut connection.
      const clientGone = (err as { code?: unknown } | null)?.code === "ERR_STREAM_PREMATURE_CLOSE";
      if (!clientGone) ctx.log("warn", "http response aborted", { url: req.url, err: String(err) });
      res.destroy();
      return;
    }
    drain(req);
    if (err instanceof HttpError) {
      sendError(res, err.status, err.message);
      return;
    }
    ctx.log("error", "http handler failed", { method: req.method, url: req.url, err: String(err) });
    sendError(res, 500, `internal error: ${err instanceof Error ? err.message : String(err)}`);
  };

  const route = async (req: HttpRequest, res: HttpResponse): Promise<void> => {
    const url = new URL(req.url ?? "/", "http://envd");
    const methods = routes[url.pathname];
    if (!methods) throw new HttpError(404, `no route for ${req.method} ${url.pathname}`);
    const handler = methods[req.method ?? "GET"];
    if (!handler) {
      res.setHeader("allow", Object.keys(methods).join(", "));
      throw new HttpError(405, `method ${req.method} is not allowed on ${url.pathname}`);
    }
    await handler(req, res, url.searchParams);
  };

  return (req, res) => {
    route(req, res).catch((err: unknown) => fail(req, res, err));
  };
}
