/**
 * The `x api` role: the platform API of a cluster, stateless. Every request goes to the node
 * that can answer it — the node of the sandbox, volume or build it names, the node placement
 * chooses for a new one, any ready node for reads of the catalog — and is answered there by the
 * same API `x serve` runs. Only what no node can say is answered here: a lost sandbox, and no
 * node to send to.
 */
import http, { type IncomingMessage, type ServerResponse } from "node:http";
import { httpErrorOf } from "../api/errors.js";
import { readBody, sendError, sendJson } from "../api/server.js";
import type { Logger } from "../lib/log.js";
import { spans } from "../lib/spans.js";
import { DomainError } from "../model/errors.js";
import { lostSandbox } from "../model/sandbox.js";
import type { Team } from "../model/team.js";
import { parseTemplateRef } from "../model/template.js";
import type { ClusterNode, Store } from "../store/index.js";
import { HEARTBEAT_MS } from "./node-agent.js";
import { freshAfter, type Placement, type PlacementRequest, place } from "./placement.js";

/** A path segment decoded; undefined when it is malformed (`%E0`), for the node to refuse as the API does. */
function decoded(segment: string): string | undefined {
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

/** Response headers about one connection (RFC 9110 7.6.1): this hop's, not passed on. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "te", "upgrade", "trailer"]);

function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

/** Memory a sandbox is counted with when its template says nothing (E2B's default). */
const DEFAULT_MEMORY_MB = 512;
const MAX_PLACED_BODY = 1024 * 1024;
const HINT_TTL_MS = 5000;
const MAX_HINTS = 10_000;

export interface ApiRouterOptions {
  store: Store;
  authenticate(apiKey: string): Promise<Team | undefined>;
  heartbeatTimeoutMs: number;
  log: Logger;
  /** Each request answered: where it went (a Destination's `to`, or `here`) and its status. */
  observeRoute?(to: string, status: number): void;
}

/** Where a request goes. */
type Destination =
  | { to: "node"; nodeId: string }
  | { to: "each"; byNode: Map<string, string[]> }
  | { to: "any" }
  | { to: "place"; kind: "sandbox" | "volume" | "build" }
  | { to: "lost"; sandboxId: string; reason?: string };

const SANDBOX = /^\/(?:v2\/)?sandboxes\/([^/]+)(\/.*)?$/;
const VOLUME = /^\/(?:volumes|volumecontent)\/([^/]+)(\/.*)?$/;
const BUILD = /^\/(?:v2\/)?templates\/([^/]+)\/builds\/([^/]+)(\/.*)?$/;
const TEMPLATE_FILES = /^\/templates\/([^/]+)\/files\//;
const NEW_BUILD = /^\/(?:v2\/|v3\/)?templates(?:\/([^/]+))?$/;

export function createApiRouter(o: ApiRouterOptions): {
  handler(req: IncomingMessage, res: ServerResponse): void;
  close(): void;
} {
  const { store, log } = o;
  const agents = new Map<string, http.Agent>();
  let turn = 0;

  const agentFor = (node: ClusterNode): http.Agent => {
    let agent = agents.get(node.id);
    if (!agent) {
      agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
      agents.set(node.id, agent);
    }
    return agent;
  };

  async function readyNodes(): Promise<ClusterNode[]> {
    const fresh = freshAfter(o.heartbeatTimeoutMs);
    return (await store.nodes.list()).filter((n) => n.state !== "down" && n.heartbeatAt >= fresh);
  }

  async function anyNode(): Promise<ClusterNode> {
    const nodes = await readyNodes();
    if (nodes.length === 0)
      throw new DomainError("unavailable", "no node of the cluster is answering now; try again later", 5);
    return nodes[turn++ % nodes.length]!;
  }

  /** Several sandboxes' latest metrics: each node is asked for its own (their samples are there). */
  async function metricsDestination(query: URLSearchParams): Promise<Destination> {
    const ids = (query.get("sandbox_ids") ?? "").split(",").filter(Boolean);
    const found = await store.sandboxes.nodesOf(ids);
    const byNode = new Map<string, string[]>();
    for (const [id, { nodeId, state }] of found) {
      if (state === "running") byNode.set(nodeId, [...(byNode.get(nodeId) ?? []), id]);
    }
    // none running (or a bad request): any node answers it as it would
    return byNode.size > 0 ? { to: "each", byNode } : { to: "any" };
  }

  async function destination(method: string, path: string, query: URLSearchParams): Promise<Destination> {
    if (path === "/sandboxes/metrics") return metricsDestination(query);
    const sandbox = SANDBOX.exec(path);
    if (sandbox) {
      const id = decoded(sandbox[1]!);
      if (id === undefined) return { to: "any" }; // the node answers the 400
      const found = await store.sandboxes.get(id);
      if (!found || found.state === "killed") return { to: "any" };
      if (found.state === "lost") {
        // what the catalog alone can do: show it, and forget it
        if (!sandbox[2] && (method === "GET" || method === "DELETE")) return { to: "any" };
        return { to: "lost", sandboxId: id, ...(found.reason ? { reason: found.reason } : {}) };
      }
      return { to: "node", nodeId: found.nodeId! };
    }
    if ((path === "/sandboxes" || path === "/v2/sandboxes") && method === "POST")
      return { to: "place", kind: "sandbox" };
    const volume = VOLUME.exec(path);
    if (volume) {
      const id = decoded(volume[1]!);
      const found = id === undefined ? undefined : await store.volumes.get(id);
      return found?.nodeId ? { to: "node", nodeId: found.nodeId } : { to: "any" };
    }
    if (path === "/volumes" && method === "POST") return { to: "place", kind: "volume" };
    const build = BUILD.exec(path);
    if (build) {
      // status and logs are in the catalog; the trigger runs where the build was made
      if (method === "GET") return { to: "any" };
      const id = decoded(build[2]!);
      const found = id === undefined ? undefined : await store.templates.getBuild(id);
      return found?.nodeId ? { to: "node", nodeId: found.nodeId } : { to: "any" };
    }
    const files = TEMPLATE_FILES.exec(path);
    if (files) {
      // uploads land where the template's next build runs
      const id = decoded(files[1]!);
      const waiting = id === undefined ? undefined : await store.templates.latestBuild(id, "waiting");
      return waiting?.nodeId ? { to: "node", nodeId: waiting.nodeId } : { to: "any" };
    }
    if (method === "POST" && NEW_BUILD.test(path) && path !== "/templates/tags")
      return { to: "place", kind: "build" };
    return { to: "any" };
  }

  /**
   * The build a template name stands for, as placement weighs it (memory, pool, layers), kept a
   * few seconds: a tag moved meanwhile only makes one placement less apt, as the node resolves
   * the name itself.
   */
  const hints = new Map<string, { at: number; hint: Partial<PlacementRequest> }>();
  async function buildHint(team: Team, templateID: string): Promise<Partial<PlacementRequest>> {
    const key = `${team.id}\0${templateID}`;
    const kept = hints.get(key);
    if (kept && Date.now() - kept.at < HINT_TTL_MS) return kept.hint;
    const ref = parseTemplateRef(templateID);
    const template = await store.templates.resolveTemplate(ref, team).catch(() => undefined);
    const build = template && (await store.templates.buildForTag(template.id, ref.tag));
    const hint = build ? { memoryMB: build.memoryMB, buildId: build.id, layers: build.layers } : {};
    if (hints.size >= MAX_HINTS) hints.clear();
    hints.set(key, { at: Date.now(), hint });
    return hint;
  }

  /** What placement needs of a create: the template's memory, build and layers, and the volumes' node. */
  async function sandboxRequest(req: IncomingMessage, body: Buffer): Promise<PlacementRequest> {
    const request: PlacementRequest = { memoryMB: DEFAULT_MEMORY_MB };
    let parsed: { templateID?: unknown; runtime?: unknown; volumeMounts?: unknown };
    try {
      parsed = JSON.parse(body.toString("utf8") || "{}");
    } catch {
      return request; // the node answers the 400
    }
    if (typeof parsed.runtime === "string") request.runtime = parsed.runtime;
    const key = req.headers["x-api-key"];
    const team = typeof key === "string" ? await o.authenticate(key) : undefined;
    if (!team) return request;
    if (typeof parsed.templateID === "string")
      Object.assign(request, await buildHint(team, parsed.templateID));
    if (Array.isArray(parsed.volumeMounts)) {
      for (const mount of parsed.volumeMounts as { name?: unknown }[]) {
        if (typeof mount?.name !== "string") continue;
        const volume = await store.volumes.byName(team.id, mount.name);
        if (!volume?.nodeId) continue;
        if (request.nodeId && request.nodeId !== volume.nodeId) {
          throw new DomainError(
            "invalid",
            `volumes '${mount.name}' and another of this create live on different nodes (${volume.nodeId}, ${request.nodeId}): one sandbox can mount volumes of one node`,
          );
        }
        request.nodeId = volume.nodeId;
      }
    }
    return request;
  }

  /** Sends the request to the node and its answer back; `body` when it was read here already. */
  function forward(
    req: IncomingMessage,
    res: ServerResponse,
    node: ClusterNode,
    body?: Buffer,
  ): Promise<void> {
    return new Promise((resolve) => {
      const url = new URL(req.url ?? "/", node.apiUrl);
      const headers = { ...req.headers };
      headers["x-forwarded-for"] = [req.headers["x-forwarded-for"], req.socket.remoteAddress]
        .filter(Boolean)
        .join(", ");
      if (body) {
        headers["content-length"] = String(body.length);
        delete headers["transfer-encoding"];
      }
      const up = http.request(url, { method: req.method, headers, agent: agentFor(node) }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
        answer.pipe(res);
        answer.on("end", resolve);
        answer.on("error", () => {
          res.destroy();
          resolve();
        });
      });
      up.on("error", (err) => {
        log.warn({ nodeId: node.id, err }, "node did not answer");
        if (!res.headersSent) {
          sendError(
            res,
            503,
            `node ${node.id} is not answering (${(err as NodeJS.ErrnoException).code ?? err.message}); try again`,
            {
              "Retry-After": "2",
            },
          );
        } else res.destroy();
        resolve();
      });
      res.on("close", () => {
        if (!res.writableFinished) up.destroy();
      });
      if (body) up.end(body);
      else req.pipe(up);
    });
  }

  /** Asks each node for the metrics of its own sandboxes and answers with them all. */
  async function gather(
    req: IncomingMessage,
    res: ServerResponse,
    byNode: Map<string, string[]>,
  ): Promise<void> {
    const sandboxes: Record<string, unknown> = {};
    for (const [nodeId, ids] of byNode) {
      const node = await store.nodes.get(nodeId);
      if (!node || node.state === "down") continue;
      const url = new URL(
        `/sandboxes/metrics?sandbox_ids=${ids.map(encodeURIComponent).join(",")}`,
        node.apiUrl,
      );
      const answer = await fetch(url, {
        headers: { "x-api-key": String(req.headers["x-api-key"] ?? "") },
      }).catch(() => undefined);
      if (!answer) continue; // a node that does not answer has no samples to give
      const body = (await answer.json().catch(() => undefined)) as
        | { sandboxes?: Record<string, unknown> }
        | undefined;
      // the first refusal (a bad key) is the answer, as one node would give it
      if (!answer.ok)
        return sendJson(res, answer.status, body ?? { code: answer.status, message: answer.statusText });
      Object.assign(sandboxes, body?.sandboxes);
    }
    sendJson(res, 200, { sandboxes });
  }

  async function handle(req: IncomingMessage, res: ServerResponse, seen: { to: string }): Promise<void> {
    const url = new URL(req.url ?? "/", "http://api");
    const path = url.pathname;
    const method = req.method ?? "GET";
    if (path === "/health") return sendJson(res, 200, { status: "ok", role: "api" });
    const dest = await destination(method, path, url.searchParams);
    seen.to = dest.to;
    switch (dest.to) {
      case "each":
        return gather(req, res, dest.byNode);
      case "any":
        return forward(req, res, await anyNode());
      case "node": {
        const node = await store.nodes.get(dest.nodeId);
        if (!node) throw new DomainError("unavailable", `node ${dest.nodeId} is not part of the cluster`, 5);
        return forward(req, res, node);
      }
      case "lost":
        throw lostSandbox({ id: dest.sandboxId, ...(dest.reason ? { reason: dest.reason } : {}) });
      case "place": {
        const span = spans(log, "placed", { kind: dest.kind });
        const body = await readBody(req, MAX_PLACED_BODY);
        span.mark("body");
        const request = dest.kind === "sandbox" ? await sandboxRequest(req, body) : { memoryMB: 0 };
        span.mark("resolve");
        const placement: Placement = await place(store, request, o.heartbeatTimeoutMs);
        span.mark("place");
        try {
          await forward(req, res, placement.node, body);
          span.mark("node");
          span.end({ nodeId: placement.node.id, status: res.statusCode });
        } finally {
          // kept until the node's next heartbeat counts what it created
          setTimeout(() => void placement.release().catch(() => undefined), HEARTBEAT_MS + 1000).unref();
        }
        return;
      }
    }
  }

  return {
    handler(req, res) {
      const seen = { to: "here" };
      res.on("finish", () => o.observeRoute?.(seen.to, res.statusCode));
      handle(req, res, seen).catch((err: unknown) => {
        // the API's one table of answers: domain errors, and the catalog not answering (503)
        const known = httpErrorOf(err);
        if (known) return sendError(res, known.status, known.message, known.headers);
        log.error({ err, url: req.url }, "api request failed");
        sendError(res, 500, "the api failed to route this request; try again");
      });
    },
    close() {
      for (const agent of agents.values()) agent.destroy();
    },
  };
}
