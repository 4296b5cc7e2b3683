import type { IncomingMessage, ServerResponse } from "node:http";
import type { Logger } from "../lib/log.js";
import type { Registry } from "../observability/metrics.js";
import type { Authenticate } from "./authenticate.js";
import { frontDoor, refuseNul } from "./front-door.js";
import type { AnyHandler, ApiRequest, Handlers } from "./handler.js";
import { describeErrors, type OpenApiRouter } from "./openapi.js";
import { readJsonBody, sendError, sendJson } from "./server-io.js";

export { readBody, sendError, sendJson } from "./server-io.js";

export interface ApiServerOptions {
  router: OpenApiRouter;
  handlers: Handlers;
  authenticate: Authenticate;
  log: Logger;
  observe?(op: string, status: number, seconds: number): void;
  /** Served as `GET /metrics`. */
  metrics?: Registry;
  /** The bearer token `/metrics` needs (front-door.ts). */
  metricsToken?: string;
  /** Other surfaces, before the API (a node's `/node/…` routes). */
  surfaces?: Array<(req: IncomingMessage, res: ServerResponse) => boolean>;
}

/** The request listener of the platform API: the front door, then each operation's handler. */
export function createApiHandler(
  options: ApiServerOptions,
): (req: IncomingMessage, res: ServerResponse) => void {
  const { handlers } = options;
  return frontDoor({
    ...options,
    async dispatch(call) {
      const { op, log, req, res } = call;
      // the router knows only operations of the spec, and `Handlers` has one for each of them
      const handler = handlers[op.id as keyof Handlers] as unknown as AnyHandler;
      const body = op.jsonBody ? (await readJsonBody(req, op, refuseNul)).body : undefined;
      const request = {
        op,
        team: call.team,
        caller: call.caller,
        params: call.params,
        body,
        req,
        res,
        url: call.url,
      } as ApiRequest;
      const reply = await handler(request);
      if (!reply) return;
      const validate = op.validateResponse.get(reply.status);
      if (validate && reply.body !== undefined && !validate(reply.body)) {
        log.error(
          { op: op.id, status: reply.status, problem: describeErrors("response", validate) },
          "response does not match the API schema",
        );
        return sendError(
          res,
          500,
          `internal error: ${op.id} produced a response that does not match the API schema`,
        );
      }
      sendJson(res, reply.status, reply.body, reply.headers);
    },
  });
}
