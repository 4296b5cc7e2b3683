import { createHash, randomUUID, timingSafeEqual } from "node:crypto";
import {
  createServer,
  type Server as HttpServer,
  type IncomingMessage,
  type ServerResponse,
} from "node:http";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { Gateway } from "./gateway.js";
import type { Log } from "./log.js";

export const MCP_PATH = "/mcp";
/** The largest request body taken (a JSON-RPC message or a batch). */
const MAX_BODY_BYTES = 8 * 1024 * 1024;

const digest = (text: string) => createHash("sha256").update(text).digest();

/** Whether the request carries `Authorization: Bearer <token>`, compared in constant time. */
export function hasToken(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? "";
  const match = /^Bearer\s+(.+)$/i.exec(header.trim());
  return match !== null && timingSafeEqual(digest(match[1]!), digest(token));
}

function reply(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

/** A JSON-RPC error as the answer to an HTTP request that reached no session. */
function rpcError(res: ServerResponse, status: number, code: number, message: string): void {
  reply(res, status, { jsonrpc: "2.0", error: { code, message }, id: null });
}

class BodyTooLarge extends Error {}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) throw new BodyTooLarge();
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

/**
 * MCP's Streamable HTTP transport on `/mcp`, behind a bearer token: every request without it
 * answers 401. Each `initialize` opens a session (its id in `Mcp-Session-Id`) with a server of
 * its own from the gateway; later requests of the session (POST, the GET stream, DELETE) go to it.
 */
export function createMcpHttpServer(gateway: Gateway, token: string, log: Log): HttpServer {
  const sessions = new Map<string, StreamableHTTPServerTransport>();

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    if (!hasToken(req, token)) {
      reply(
        res,
        401,
        { error: "unauthorized", message: "send the gateway's token as 'Authorization: Bearer <token>'" },
        { "www-authenticate": 'Bearer realm="mcp-gateway"' },
      );
      return;
    }
    const pathname = new URL(req.url ?? "/", "http://gateway").pathname.replace(/\/+$/, "");
    if (pathname !== MCP_PATH) {
      reply(res, 404, { error: "not_found", message: `the MCP endpoint is ${MCP_PATH}` });
      return;
    }
    const sessionHeader = req.headers["mcp-session-id"];
    const sessionId = Array.isArray(sessionHeader) ? sessionHeader[0] : sessionHeader;
    if (req.method === "POST") {
      let body: unknown;
      try {
        body = await readJson(req);
      } catch (err) {
        if (err instanceof BodyTooLarge) return rpcError(res, 413, -32600, "Request body too large");
        return rpcError(res, 400, -32700, "Parse error: the body is not JSON");
      }
      if (sessionId) {
        const transport = sessions.get(sessionId);
        if (!transport) return rpcError(res, 404, -32001, "Session not found: initialize a new one");
        return transport.handleRequest(req, res, body);
      }
      const initializing = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
      if (!initializing) {
        return rpcError(res, 400, -32000, "Bad Request: no Mcp-Session-Id: initialize a session first");
      }
      const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => randomUUID(),
        onsessioninitialized: (id) => {
          sessions.set(id, transport);
        },
      });
      transport.onclose = () => {
        if (transport.sessionId) sessions.delete(transport.sessionId);
      };
      await gateway.createSession().connect(transport);
      return transport.handleRequest(req, res, body);
    }
    if (req.method === "GET" || req.method === "DELETE") {
      const transport = sessionId ? sessions.get(sessionId) : undefined;
      if (!transport) return rpcError(res, sessionId ? 404 : 400, -32001, "Session not found");
      return transport.handleRequest(req, res);
    }
    reply(
      res,
      405,
      { error: "method_not_allowed", message: `${req.method} is not a method of ${MCP_PATH}` },
      {
        allow: "GET, POST, DELETE",
      },
    );
  }

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      log.info(`request ${req.method} ${req.url} failed: ${(err as Error).stack ?? err}`);
      if (!res.headersSent) rpcError(res, 500, -32603, "Internal error");
      else res.end();
    });
  });
  server.on("close", () => {
    for (const transport of sessions.values()) transport.close().catch(() => undefined);
  });
  return server;
}
