import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import {
  CallToolRequestSchema,
  CallToolResultSchema,
  CompleteRequestSchema,
  CompleteResultSchema,
  ErrorCode,
  GetPromptRequestSchema,
  GetPromptResultSchema,
  ListPromptsRequestSchema,
  ListPromptsResultSchema,
  ListResourcesRequestSchema,
  ListResourcesResultSchema,
  ListResourceTemplatesRequestSchema,
  ListResourceTemplatesResultSchema,
  ListToolsRequestSchema,
  ListToolsResultSchema,
  McpError,
  type Progress,
  type Prompt,
  ReadResourceRequestSchema,
  ReadResourceResultSchema,
  type Resource,
  type ResourceTemplate,
  type ServerCapabilities,
  type Tool,
} from "@modelcontextprotocol/sdk/types.js";
import type { Log } from "./log.js";
import { prefixName, prefixUri, splitName, splitUri } from "./names.js";
import { GATEWAY_NAME, GATEWAY_VERSION } from "./options.js";
import type { ListKind, Upstream } from "./upstream.js";

/** A tool call may take this long upstream; each progress notification starts the time again. */
const CALL_TIMEOUT_MS = 10 * 60_000;
/** Pages asked of one server for one list, at most (a server whose cursor never ends). */
const MAX_PAGES = 100;

type ListMethod = "tools/list" | "prompts/list" | "resources/list" | "resources/templates/list";

/** Content that may name a resource: tool results and prompt messages. */
interface ContentLike {
  type?: string;
  uri?: unknown;
  resource?: { uri?: unknown };
}

/**
 * The servers behind one MCP endpoint: every session of the endpoint gets a `Server` whose
 * lists are the servers' lists under their labels, and whose calls go to the server a name's
 * label picks (names.ts). A server that stops drops out of the lists; calls to it fail.
 */
export class Gateway {
  private readonly byLabel = new Map<string, Upstream>();
  private readonly sessions = new Set<Server>();

  constructor(
    readonly upstreams: Upstream[],
    private readonly log: Log,
  ) {
    for (const upstream of upstreams) {
      this.byLabel.set(upstream.label, upstream);
      upstream.onListChanged((kind) => this.broadcast(kind));
    }
  }

  /** What the gateway declares: the three lists always (they may be empty), completions when a server has them. */
  capabilities(): ServerCapabilities {
    const completions = this.upstreams.some((u) => u.capabilities.completions);
    return {
      tools: { listChanged: true },
      prompts: { listChanged: true },
      resources: { listChanged: true },
      ...(completions ? { completions: {} } : {}),
    };
  }

  instructions(): string | undefined {
    const parts = this.upstreams
      .filter((u) => u.instructions)
      .map((u) => `## ${u.plan.key} (names start with ${prefixName(u.label, "")})\n\n${u.instructions}`);
    return parts.length ? parts.join("\n\n") : undefined;
  }

  /** A new session's server, with every handler set. */
  createSession(): Server {
    const server = new Server(
      { name: GATEWAY_NAME, version: GATEWAY_VERSION, title: "MCP gateway" },
      { capabilities: this.capabilities(), instructions: this.instructions() },
    );
    this.sessions.add(server);
    server.onclose = () => this.sessions.delete(server);

    server.setRequestHandler(ListToolsRequestSchema, async () => ({
      tools: await this.collect<Tool>("tools", "tools/list", ListToolsResultSchema, "tools", (u, t) => ({
        ...t,
        name: prefixName(u.label, t.name),
      })),
    }));
    server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
      const { upstream, name } = this.routeName(request.params.name, "tool");
      const progressToken = request.params._meta?.progressToken;
      const result = await upstream.client.request(
        { method: "tools/call", params: { ...withoutProgressToken(request.params), name } },
        CallToolResultSchema,
        {
          signal: extra.signal,
          timeout: CALL_TIMEOUT_MS,
          resetTimeoutOnProgress: true,
          onprogress: (progress: Progress) => {
            if (progressToken === undefined) return;
            extra
              .sendNotification({ method: "notifications/progress", params: { ...progress, progressToken } })
              .catch(() => undefined);
          },
        },
      );
      return { ...result, content: (result.content ?? []).map((c) => rewriteContent(upstream.label, c)) };
    });

    server.setRequestHandler(ListPromptsRequestSchema, async () => ({
      prompts: await this.collect<Prompt>(
        "prompts",
        "prompts/list",
        ListPromptsResultSchema,
        "prompts",
        (u, p) => ({
          ...p,
          name: prefixName(u.label, p.name),
        }),
      ),
    }));
    server.setRequestHandler(GetPromptRequestSchema, async (request, extra) => {
      const { upstream, name } = this.routeName(request.params.name, "prompt");
      const result = await upstream.client.request(
        { method: "prompts/get", params: { ...withoutProgressToken(request.params), name } },
        GetPromptResultSchema,
        { signal: extra.signal },
      );
      return {
        ...result,
        messages: result.messages.map((m) => ({ ...m, content: rewriteContent(upstream.label, m.content) })),
      };
    });

    server.setRequestHandler(ListResourcesRequestSchema, async () => ({
      resources: await this.collect<Resource>(
        "resources",
        "resources/list",
        ListResourcesResultSchema,
        "resources",
        (u, r) => ({
          ...r,
          uri: prefixUri(u.label, r.uri),
          name: prefixName(u.label, r.name),
        }),
      ),
    }));
    server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
      resourceTemplates: await this.collect<ResourceTemplate>(
        "resources",
        "resources/templates/list",
        ListResourceTemplatesResultSchema,
        "resourceTemplates",
        (u, t) => ({
          ...t,
          uriTemplate: prefixUri(u.label, t.uriTemplate),
          name: prefixName(u.label, t.name),
        }),
      ),
    }));
    server.setRequestHandler(ReadResourceRequestSchema, async (request, extra) => {
      const { upstream, uri } = this.routeUri(request.params.uri);
      const result = await upstream.client.request(
        { method: "resources/read", params: { ...withoutProgressToken(request.params), uri } },
        ReadResourceResultSchema,
        { signal: extra.signal },
      );
      return {
        ...result,
        contents: result.contents.map((c) => ({ ...c, uri: prefixUri(upstream.label, c.uri) })),
      };
    });

    if (this.capabilities().completions) {
      server.setRequestHandler(CompleteRequestSchema, async (request, extra) => {
        const { ref } = request.params;
        let upstream: Upstream;
        let upstreamRef: typeof ref;
        if (ref.type === "ref/prompt") {
          const routed = this.routeName(ref.name, "prompt");
          upstream = routed.upstream;
          upstreamRef = { ...ref, name: routed.name };
        } else {
          const routed = this.routeUri(ref.uri);
          upstream = routed.upstream;
          upstreamRef = { ...ref, uri: routed.uri };
        }
        if (!upstream.capabilities.completions) return { completion: { values: [] } };
        return upstream.client.request(
          {
            method: "completion/complete",
            params: { ...withoutProgressToken(request.params), ref: upstreamRef },
          },
          CompleteResultSchema,
          { signal: extra.signal },
        );
      });
    }
    return server;
  }

  /** Every page of one list of every running server that has it, under the server's label. */
  private async collect<T>(
    capability: ListKind,
    method: ListMethod,
    schema: Parameters<Upstream["client"]["request"]>[1],
    field: string,
    map: (upstream: Upstream, item: T) => T,
  ): Promise<T[]> {
    const lists = await Promise.all(
      this.upstreams.map(async (upstream) => {
        if (upstream.stoppedReason || !upstream.capabilities[capability]) return [];
        const items: T[] = [];
        let cursor: string | undefined;
        try {
          for (let page = 0; page < MAX_PAGES; page++) {
            const result = (await upstream.client.request(
              { method, params: cursor ? { cursor } : {} },
              schema,
            )) as Record<string, unknown>;
            for (const item of (result[field] as T[] | undefined) ?? []) items.push(map(upstream, item));
            cursor = typeof result.nextCursor === "string" ? result.nextCursor : undefined;
            if (!cursor) break;
          }
        } catch (err) {
          // one server failing leaves the others' lists whole
          this.log.info(`${upstream.plan.key}: ${method} failed: ${(err as Error).message}`);
        }
        return items;
      }),
    );
    return lists.flat();
  }

  private live(upstream: Upstream): Upstream {
    if (upstream.stoppedReason) {
      throw new McpError(
        ErrorCode.InternalError,
        `${upstream.plan.key} no longer runs: ${upstream.stoppedReason}`,
      );
    }
    return upstream;
  }

  private routeName(gatewayName: string, what: string): { upstream: Upstream; name: string } {
    const split = splitName(gatewayName);
    const upstream = split && this.byLabel.get(split.label);
    if (!split || !upstream) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown ${what}: ${gatewayName} (the gateway's names are <server>__<name>, as its lists give them)`,
      );
    }
    return { upstream: this.live(upstream), name: split.name };
  }

  private routeUri(gatewayUri: string): { upstream: Upstream; uri: string } {
    const split = splitUri(gatewayUri);
    const upstream = split && this.byLabel.get(split.label);
    if (!split || !upstream) {
      throw new McpError(
        ErrorCode.InvalidParams,
        `Unknown resource: ${gatewayUri} (the gateway's resource URIs are <server>+<uri>, as its lists give them)`,
      );
    }
    return { upstream: this.live(upstream), uri: split.uri };
  }

  /** Tells every session that a list changed (a server said so, or one stopped). */
  broadcast(kind: ListKind): void {
    for (const server of this.sessions) {
      const send =
        kind === "tools"
          ? server.sendToolListChanged()
          : kind === "prompts"
            ? server.sendPromptListChanged()
            : server.sendResourceListChanged();
      send.catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    await Promise.all([...this.sessions].map((s) => s.close().catch(() => undefined)));
    await Promise.all(this.upstreams.map((u) => u.close()));
  }
}

/** A request's params for the server: the progress token is the gateway's own upstream. */
function withoutProgressToken<P extends { _meta?: Record<string, unknown> }>(params: P): P {
  if (!params._meta || !("progressToken" in params._meta)) return params;
  const { progressToken: _token, ...meta } = params._meta;
  return { ...params, _meta: meta };
}

/** Resource URIs in content, under the server's label, so that they read through the gateway. */
function rewriteContent<C>(label: string, content: C): C {
  const c = content as ContentLike;
  if (c.type === "resource_link" && typeof c.uri === "string")
    return { ...content, uri: prefixUri(label, c.uri) };
  if (c.type === "resource" && c.resource && typeof c.resource.uri === "string") {
    return { ...content, resource: { ...c.resource, uri: prefixUri(label, c.resource.uri) } };
  }
  return content;
}
