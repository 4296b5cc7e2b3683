import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../lib/log.js";
import { invalid, tooLarge, unauthenticated } from "../model/errors.js";
import type { Team } from "../model/team.js";
import { httpErrorOf } from "./errors.js";
import type { AnyHandler, ApiRequest, Handlers } from "./handler.js";
import { describeErrors, gatherParams, type OpenApiRouter } from "./openapi.js";

export interface ApiServerOptions {
  router: OpenApiRouter;
  handlers: Handlers;
  authenticate(apiKey: string): Promise<Team | undefined>;
  log: Logger;
  observe?(op: string, status: number, seconds: number): void;
}

const MAX_JSON_BODY = 10 * 1024 * 1024;

/** A request's whole body, refused (413) past `maxBytes`. */
export function readBody(req: IncomingMessage, maxBytes: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(tooLarge(`request body larger than ${maxBytes} bytes`));
        req.destroy();
        return;
      }
      chunks.push(chunk);
    });
    req.on("error", reject);
    req.on("end", () => resolve(Buffer.concat(chunks)));
  });
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const text = (await readBody(req, MAX_JSON_BODY)).toString("utf8");
  if (text.trim() === "") return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw invalid("request body is not valid JSON");
  }
}

export function sendJson(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  if (body === undefined) {
    // The public client parses every non-204 2xx as JSON, so an empty body is declared as such.
    res.writeHead(status, { ...headers, "Content-Length": "0" });
    res.end();
    return;
  }
  const text = JSON.stringify(body);
  res.writeHead(status, {
    ...headers,
    "Content-Type": "application/json",
    "Content-Length": String(Buffer.byteLength(text)),
  });
  res.end(text);
}

export function sendError(
  res: ServerResponse,
  status: number,
  message: string,
  headers: Record<string, string> = {},
): void {
  sendJson(res, status, { code: status, message }, headers);
}

/** The request listener of the platform API. */
export function createApiHandler(
  options: ApiServerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { router, handlers, log } = options;

  /** `seen.op` is set once the request is routed, for the observe hook. */
  async function handle(
    req: IncomingMessage,
    res: ServerResponse,
    seen: { op?: string; path?: string },
  ): Promise<void> {
    const url = parseUrl(req.url);
    seen.path = url.pathname;
    const match = router.match(req.method ?? "GET", url.pathname);
    if (match === "method-not-allowed")
      return sendError(res, 405, `${req.method} is not allowed on ${url.pathname}`);
    if (!match) return sendError(res, 404, `no such endpoint: ${req.method} ${url.pathname}`);
    const { op, pathParams } = match;
    seen.op = op.id;
    // the router knows only operations of the spec, and `Handlers` has one for each of them
    const handler = handlers[op.id as keyof Handlers] as unknown as AnyHandler;

    let team: Team | undefined;
    if (op.authenticated) {
      const key = req.headers["x-api-key"];
      const apiKey = Array.isArray(key) ? key[0] : key;
      if (!apiKey) throw unauthenticated("missing API key: send it in the X-API-Key header");
      team = await options.authenticate(apiKey);
      if (!team) throw unauthenticated("invalid API key");
    }

    const params = gatherParams(op, pathParams, url.searchParams, req.headers);
    refuseNul(params, "parameter");
    if (!op.validateParams(params)) throw invalid(describeErrors("parameter", op.validateParams));

    let body: unknown;
    if (op.jsonBody) {
      body = await readJson(req);
      if (body === undefined && op.bodyRequired) throw invalid("request body is required");
      refuseNul(body, "body");
      if (body !== undefined && op.validateBody && !op.validateBody(body)) {
        throw invalid(describeErrors("body", op.validateBody));
      }
    }

    const request = { op, team, params, body, req, res, url } as ApiRequest;
    const reply = await handler(request);
    if (!reply) return;
    const validate = op.validateResponse.get(reply.status);
    if (validate && reply.body !== undefined && !validate(reply.body)) {
      log.error(
        {
          op: op.id,
          status: reply.status,
          problem: describeErrors("response", validate),
        },
        "response does not match the API schema",
      );
      return sendError(
        res,
        500,
        `internal error: ${op.id} produced a response that does not match the API schema`,
      );
    }
    sendJson(res, reply.status, reply.body, reply.headers);
  }

  return (req, res) => {
    const started = process.hrtime.bigint();
    const seen: { op?: string; path?: string } = {};
    handle(req, res, seen)
      .catch((err: unknown) => {
        const known = httpErrorOf(err);
        if (known) {
          sendError(res, known.status, known.message, known.headers);
        } else {
          log.error(
            {
              path: seen.path,
              err,
            },
            "request failed",
          );
          sendError(res, 500, "internal error");
        }
      })
      .then(() => {
        options.observe?.(
          seen.op ?? "unmatched",
          res.statusCode,
          Number(process.hrtime.bigint() - started) / 1e9,
        );
      });
  };
}

/**
 * No text the API takes may hold U+0000: PostgreSQL cannot store it, and no name, path,
 * environment variable or metadata value can sensibly contain it.
 */
function refuseNul(value: unknown, where: string): void {
  // iterative: a deeply nested body must not exhaust the stack
  const pending: unknown[] = [value];
  while (pending.length > 0) {
    const item = pending.pop();
    if (typeof item === "string") {
      if (item.includes("\u0000")) throw invalid(`${where} must not contain NUL characters`);
    } else if (Array.isArray(item)) {
      for (const child of item) pending.push(child);
    } else if (item && typeof item === "object") {
      for (const [key, child] of Object.entries(item)) pending.push(key, child);
    }
  }
}

/** The request target as a URL; one that does not parse is the caller's mistake. */
function parseUrl(target: string | undefined): URL {
  // Only origin-form targets are served: "//x" must stay a path, not become a host.
  try {
    return new URL(`http://api${target?.startsWith("/") ? target : `/${target ?? ""}`}`);
  } catch {
    throw invalid("request target is not a valid URL path");
  }
}
