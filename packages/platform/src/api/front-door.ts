/**
 * The one front door of the platform's HTTP surfaces: `x serve` and `x node` (the API answered
 * by handlers, server.ts) and `x api` (the API sent to nodes, cluster/api-router.ts), and where
 * later ones (a console, admin endpoints) plug in. It owns what every request gets whoever
 * answers it: a request id, `GET /metrics`, the spec's routing (404 and 405), the team's API
 * key, parameters checked against the spec, the one table of error answers, and each request
 * observed by operation.
 */
import { randomUUID } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../lib/log.js";
import { invalid, unauthenticated } from "../model/errors.js";
import type { Team } from "../model/team.js";
import type { Registry } from "../observability/metrics.js";
import { withMetricsEndpoint } from "../observability/metrics-endpoint.js";
import { type Authenticate, type Caller, credentialOf } from "./authenticate.js";
import { httpErrorOf } from "./errors.js";
import { describeErrors, gatherParams, type OpenApiRouter, type Operation } from "./openapi.js";
import { sendError } from "./server-io.js";

type Listener = (req: IncomingMessage, res: ServerResponse) => void;

/** Names one request in every log line about it, here and on the node an api sends it to. */
export const REQUEST_ID_HEADER = "x-request-id";

/** A caller's own request id is kept when it is a short token, so it cannot forge log lines. */
const CALLER_REQUEST_ID = /^[\w.:@/+=-]{1,128}$/;

/** A request past the front door: matched to its operation, its caller known, its parameters valid. */
export interface Call {
  op: Operation;
  /** Undefined only for operations without the API key's security (`/health`, signed uploads). */
  team: Team | undefined;
  /** The team and which of its keys or tokens made the call (with `team`). */
  caller: Caller | undefined;
  /** Path parameters, decoded, as matched. */
  pathParams: Record<string, string>;
  /** Path, query and header parameters as validated (and coerced) against the spec. */
  params: Record<string, unknown>;
  url: URL;
  req: IncomingMessage;
  res: ServerResponse;
  requestId: string;
  /** The surface's logger, with the request id. */
  log: Logger;
}

export interface FrontDoorOptions {
  router: OpenApiRouter;
  authenticate: Authenticate;
  log: Logger;
  /** Answers a call; throws what the error table turns into an answer. */
  dispatch(call: Call): Promise<void>;
  /** Other surfaces, asked before the API: each answers a request it claims and returns true. */
  surfaces?: Array<(req: IncomingMessage, res: ServerResponse) => boolean>;
  /** Served as `GET /metrics` (Prometheus text) when given. */
  metrics?: Registry;
  /** The bearer token `/metrics` then needs, and shows tenants' labels to; anonymous without one. */
  metricsToken?: string;
  /** Each request answered: its operation (`unmatched` when none), status and duration. */
  observe?(op: string, status: number, seconds: number): void;
}

export function frontDoor(o: FrontDoorOptions): Listener {
  async function handle(req: IncomingMessage, res: ServerResponse, seen: Seen): Promise<void> {
    const url = parseUrl(req.url);
    seen.path = url.pathname;
    // as E2B's: nothing about a secret is kept by a cache, errors included
    if (url.pathname === "/secrets" || url.pathname.startsWith("/secrets/"))
      res.setHeader("Cache-Control", "no-store");
    const match = o.router.match(req.method ?? "GET", url.pathname);
    if (match === "method-not-allowed")
      return sendError(res, 405, `${req.method} is not allowed on ${url.pathname}`);
    if (!match) return sendError(res, 404, `no such endpoint: ${req.method} ${url.pathname}`);
    const { op, pathParams } = match;
    seen.op = op.id;
    const caller = op.authenticated ? await authenticated(req, o.authenticate) : undefined;
    const params = gatherParams(op, pathParams, url.searchParams, req.headers);
    refuseNul(params, "parameter");
    if (!op.validateParams(params)) throw invalid(describeErrors("parameter", op.validateParams));
    await o.dispatch({
      op,
      team: caller?.team,
      caller,
      pathParams,
      params,
      url,
      req,
      res,
      requestId: seen.id,
      log: seen.log,
    });
  }

  const api: Listener = (req, res) => {
    const started = process.hrtime.bigint();
    const id = requestIdOf(req);
    res.setHeader(REQUEST_ID_HEADER, id);
    for (const surface of o.surfaces ?? []) if (surface(req, res)) return;
    const seen: Seen = { id, log: o.log.child({ requestId: id }) };
    handle(req, res, seen)
      .catch((err: unknown) => {
        const known = httpErrorOf(err);
        if (known) return sendError(res, known.status, known.message, known.headers);
        seen.log.error({ path: seen.path, err }, "request failed");
        sendError(res, 500, "internal error");
      })
      .then(() => {
        o.observe?.(seen.op ?? "unmatched", res.statusCode, Number(process.hrtime.bigint() - started) / 1e9);
      });
  };
  if (!o.metrics) return api;
  return withMetricsEndpoint(
    o.metrics,
    api,
    (err) => o.log.error({ err }, "metrics collection failed"),
    o.metricsToken,
  );
}

interface Seen {
  id: string;
  log: Logger;
  op?: string;
  path?: string;
}

/** The caller's request id when it sent a usable one, a new one otherwise. */
export function requestIdOf(req: IncomingMessage): string {
  const given = req.headers[REQUEST_ID_HEADER];
  const id = Array.isArray(given) ? given[0] : given;
  return id && CALLER_REQUEST_ID.test(id) ? id : randomUUID();
}

/** The team whose API key (`X-API-Key`) or access token (`Authorization: Bearer`) the request carries, or a 401. */
async function authenticated(req: IncomingMessage, authenticate: Authenticate): Promise<Caller> {
  const credential = credentialOf(req.headers);
  const caller = await authenticate(credential);
  if (!caller)
    throw unauthenticated(credential.kind === "api_key" ? "invalid API key" : "invalid access token");
  return caller;
}

/**
 * No text the API takes may hold U+0000: PostgreSQL cannot store it, and no name, path,
 * environment variable or metadata value can sensibly contain it.
 */
export function refuseNul(value: unknown, where: string): void {
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
