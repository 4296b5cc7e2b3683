/**
 * The `x api` role: the platform API of a cluster, stateless. Requests come in through the
 * same front door as `x serve`'s (request id, API key, the spec's routing and parameter checks,
 * the error table, metrics), and each operation goes where its route (routes.ts) says: the
 * node of the sandbox, volume or build it names, the node placement chooses for a new one, any
 * ready node for reads of the catalog. There the same API `x serve` runs answers it. Only what
 * no node can say is answered here: a lost sandbox, no node to send to, and a node that failed
 * with the request (upstream.ts; creates, create-reconcile.ts).
 */
import http from "node:http";
import { openapiDocument } from "@x/platform-client";
import type { Authenticate } from "../api/authenticate.js";
import { type Call, frontDoor, REQUEST_ID_HEADER, refuseNul } from "../api/front-door.js";
import { OpenApiRouter } from "../api/openapi.js";
import { CREATE_TICKET_HEADER } from "../api/routes/sandboxes.js";
import { readJsonBody, sendJson } from "../api/server-io.js";
import type { Logger } from "../lib/log.js";
import { spans } from "../lib/spans.js";
import { DomainError, invalid, unavailable } from "../model/errors.js";
import { lostSandbox } from "../model/sandbox.js";
import type { Registry } from "../observability/metrics.js";
import type { ClusterNode, Store } from "../store/index.js";
import { createOnNode } from "./create-reconcile.js";
import { HEARTBEAT_MS } from "./node-agent.js";
import { freshAfter, type Placement, place } from "./placement.js";
import { PLACED, ROUTE_PARAM, ROUTES, type RouteBy } from "./routes.js";
import { type CreateBody, sandboxPlacement } from "./sandbox-placement.js";
import { type Outcome, sendUpstream } from "./upstream.js";

const MAX_PLACED_BODY = 1024 * 1024;
/** A node that has not taken the connection by then never had the request. */
const CONNECT_TIMEOUT_MS = 5000;
/** Longest a node may take to begin its answer (a create waits for a boot slot, a cold boot). */
const RESPONSE_TIMEOUT_MS = 300_000;

export interface ApiRouterOptions {
  store: Store;
  authenticate: Authenticate;
  heartbeatTimeoutMs: number;
  log: Logger;
  /** Served as `GET /metrics`. */
  metrics?: Registry;
  /** The bearer token `/metrics` needs (front-door.ts). */
  metricsToken?: string;
  /** Each request answered: its operation, status and duration. */
  observeRequest?(op: string, status: number, seconds: number): void;
  /** Each request answered: how it was routed (a RouteBy, or `lost`) and its status. */
  observeRoute?(to: string, status: number): void;
  /** Overrides of the timeouts of a request sent to a node (tests). */
  timeouts?: { connectMs?: number; responseMs?: number };
  /** Other surfaces, before the API (the web console). */
  surfaces?: Array<(req: http.IncomingMessage, res: http.ServerResponse) => boolean>;
}

export function createApiRouter(o: ApiRouterOptions): {
  handler(req: http.IncomingMessage, res: http.ServerResponse): void;
  close(): void;
} {
  const { store } = o;
  const agents = new Map<string, http.Agent>();
  const placementOf = sandboxPlacement(store);
  let turn = 0;

  const agentFor = (node: ClusterNode): http.Agent => {
    let agent = agents.get(node.id);
    if (!agent) {
      agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
      agents.set(node.id, agent);
    }
    return agent;
  };

  async function anyNode(): Promise<ClusterNode> {
    const fresh = freshAfter(o.heartbeatTimeoutMs);
    const nodes = (await store.nodes.list()).filter((n) => n.state !== "down" && n.heartbeatAt >= fresh);
    if (nodes.length === 0) throw unavailable("no node of the cluster is answering now; try again later", 5);
    return nodes[turn++ % nodes.length]!;
  }

  async function nodeNamed(id: string): Promise<ClusterNode> {
    const node = await store.nodes.get(id);
    if (!node) throw unavailable(`node ${id} is not part of the cluster`, 5);
    return node;
  }

  /** The node that holds what the path names (sandbox, volume, build), or any when none does. */
  async function holder(route: keyof typeof ROUTE_PARAM, call: Call): Promise<ClusterNode> {
    const id = call.pathParams[ROUTE_PARAM[route]]!;
    switch (route) {
      case "sandbox":
      case "sandbox-record": {
        const found = await store.sandboxes.where(id);
        // unknown or killed: any node answers as the API does (404, or the record)
        if (!found || found.state === "killed") return anyNode();
        if (found.state === "lost") {
          // what the catalog alone can do: show it, and forget it
          if (route === "sandbox-record") return anyNode();
          throw lostSandbox({ id, ...(found.reason ? { reason: found.reason } : {}) });
        }
        return nodeNamed(found.nodeId!);
      }
      case "volume": {
        const nodeId = await store.volumes.nodeOf(id);
        return nodeId ? nodeNamed(nodeId) : anyNode();
      }
      case "build": {
        const found = await store.templates.getBuild(id);
        return found?.nodeId ? nodeNamed(found.nodeId) : anyNode();
      }
      case "build-files": {
        // uploads land where the template's next build runs
        const waiting = await store.templates.latestBuild(id, "waiting");
        return waiting?.nodeId ? nodeNamed(waiting.nodeId) : anyNode();
      }
    }
  }

  /** Sends the call to the node; its answer goes to the caller, a failure is only reported. */
  function send(call: Call, node: ClusterNode, body?: Buffer, extra: Record<string, string> = {}) {
    const { req, op } = call;
    const headers: http.OutgoingHttpHeaders = { ...req.headers };
    // only this api sets a ticket: one from the caller would speak for a create it did not send
    delete headers[CREATE_TICKET_HEADER];
    Object.assign(headers, extra);
    headers[REQUEST_ID_HEADER] = call.requestId;
    headers["x-forwarded-for"] = [req.headers["x-forwarded-for"], req.socket.remoteAddress]
      .filter(Boolean)
      .join(", ");
    if (body) {
      headers["content-length"] = String(body.length);
      delete headers["transfer-encoding"];
    }
    return sendUpstream(
      {
        url: new URL(req.url ?? "/", node.apiUrl),
        method: req.method ?? "GET",
        headers,
        agent: agentFor(node),
        body: body ?? req,
        actsOnWholeRequest: !op.streamedBody,
        connectTimeoutMs: o.timeouts?.connectMs ?? CONNECT_TIMEOUT_MS,
        responseTimeoutMs: o.timeouts?.responseMs ?? RESPONSE_TIMEOUT_MS,
      },
      call.res,
    );
  }

  /** What the caller is told of a request the node did not answer. */
  function answerFor(outcome: Outcome, node: ClusterNode, call: Call): void {
    if (outcome.kind === "answered") return;
    call.log.warn({ nodeId: node.id, outcome }, "node did not answer");
    if (outcome.kind === "not-received")
      throw unavailable(`node ${node.id} did not receive this request (${outcome.reason}); try again`, 2);
    throw new DomainError(
      "may_have_acted",
      `node ${node.id} failed after it received this request (${outcome.reason}), so it may have acted on it: check before repeating it`,
    );
  }

  async function forward(call: Call, node: ClusterNode, body?: Buffer): Promise<void> {
    answerFor(await send(call, node, body), node, call);
  }

  /** A new sandbox, volume or build: placed, then sent to the node placement chose. */
  async function placed(route: keyof typeof PLACED, call: Call): Promise<void> {
    const kind = PLACED[route];
    const span = spans(call.log, "placed", { kind });
    const { raw, body } = await readJsonBody(call.req, call.op, refuseNul, MAX_PLACED_BODY);
    span.mark("body");
    const team = call.team;
    if (!team) throw invalid(`${call.op.id} needs the team's API key`);
    // a create whose Idempotency-Key made its sandbox already makes none: any node answers
    // with that one (api/idempotent-create.ts), however full the cluster is
    const key = kind === "sandbox" ? call.params["Idempotency-Key"] : undefined;
    if (typeof key === "string" && (await store.idempotencyKeys.get(team.id, key))?.sandboxId)
      return forward(call, await anyNode(), raw);
    const create = kind === "sandbox" ? (body as CreateBody) : undefined;
    const request = create ? await placementOf(team, create) : { memoryMB: 0 };
    span.mark("resolve");
    const placement: Placement = await place(store, request, o.heartbeatTimeoutMs);
    span.mark("place");
    try {
      if (create) {
        await createOnNode({
          store,
          log: call.log,
          call,
          team,
          node: placement.node,
          timeoutSeconds: create.timeout,
          send: (extra) => send(call, placement.node, raw, extra),
        });
      } else await forward(call, placement.node, raw);
      span.mark("node");
      span.end({ nodeId: placement.node.id, status: call.res.statusCode });
    } finally {
      // kept until the node's next heartbeat counts what it created
      setTimeout(() => void placement.release().catch(() => undefined), HEARTBEAT_MS + 1000).unref();
    }
  }

  /** Asks each node for the metrics of its own sandboxes and answers with them all. */
  async function gather(call: Call): Promise<void> {
    const ids = String(call.url.searchParams.get("sandbox_ids") ?? "")
      .split(",")
      .filter(Boolean);
    const byNode = new Map<string, string[]>();
    for (const [id, { nodeId, state }] of await store.sandboxes.nodesOf(ids)) {
      if (state === "running") byNode.set(nodeId, [...(byNode.get(nodeId) ?? []), id]);
    }
    // none running: any node answers it as it would
    if (byNode.size === 0) return forward(call, await anyNode());
    const sandboxes: Record<string, unknown> = {};
    for (const [nodeId, ids] of byNode) {
      const node = await store.nodes.get(nodeId);
      if (!node || node.state === "down") continue;
      const url = new URL(
        `/sandboxes/metrics?sandbox_ids=${ids.map(encodeURIComponent).join(",")}`,
        node.apiUrl,
      );
      const answer = await fetch(url, {
        headers: {
          "x-api-key": String(call.req.headers["x-api-key"] ?? ""),
          [REQUEST_ID_HEADER]: call.requestId,
        },
      }).catch(() => undefined);
      if (!answer) continue; // a node that does not answer has no samples to give
      const body = (await answer.json().catch(() => undefined)) as
        | { sandboxes?: Record<string, unknown> }
        | undefined;
      // the first refusal is the answer, as one node would give it
      if (!answer.ok)
        return sendJson(call.res, answer.status, body ?? { code: answer.status, message: answer.statusText });
      Object.assign(sandboxes, body?.sandboxes);
    }
    sendJson(call.res, 200, { sandboxes });
  }

  async function dispatch(call: Call, route: RouteBy): Promise<void> {
    switch (route) {
      case "here":
        return sendJson(call.res, 200, { status: "ok", role: "api" });
      case "any":
        return forward(call, await anyNode());
      case "sandboxes-metrics":
        return gather(call);
      case "place-sandbox":
      case "place-volume":
      case "place-build":
        return placed(route, call);
      default:
        return forward(call, await holder(route, call));
    }
  }

  const handler = frontDoor({
    router: new OpenApiRouter(openapiDocument),
    authenticate: o.authenticate,
    log: o.log,
    surfaces: o.surfaces,
    metrics: o.metrics,
    metricsToken: o.metricsToken,
    observe: o.observeRequest,
    async dispatch(call) {
      const route = ROUTES[call.op.id as keyof typeof ROUTES];
      call.res.on("finish", () => o.observeRoute?.(route, call.res.statusCode));
      await dispatch(call, route);
    },
  });

  return {
    handler,
    close() {
      for (const agent of agents.values()) agent.destroy();
    },
  };
}
