import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import { type Context, ContextNotFound, type Contexts } from "./contexts.js";
import { KernelDiedError } from "./kernel-process.js";
import { LANGUAGES, normalizeLanguage } from "./languages.js";
import { streamMessage } from "./results.js";

/** A keepalive line after this long without output, so idle proxies and clients hold on. */
const KEEPALIVE_MS = 5000;
const MAX_BODY = 16 * 1024 * 1024;

class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** FastAPI's validation errors are JSON; the rest of E2B's server answers plain text. */
    readonly json = false,
  ) {
    super(message);
  }
}

export interface ServerOptions {
  contexts: Contexts;
  /** True once the default contexts are up. */
  ready: () => boolean;
}

/** The @e2b/code-interpreter wire: /execute, /contexts, /health. */
export function createInterpreterServer(o: ServerOptions): Server {
  return createServer((req, res) => {
    res.setHeader("Access-Control-Allow-Origin", "*");
    handle(o, req, res).catch((err: unknown) => fail(res, err));
  });
}

async function handle(o: ServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const url = new URL(req.url ?? "/", "http://localhost");
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  const method = req.method ?? "GET";
  if (method === "OPTIONS") {
    res.writeHead(200, {
      "Access-Control-Allow-Methods": "GET, POST, DELETE, OPTIONS",
      "Access-Control-Allow-Headers": req.headers["access-control-request-headers"] ?? "*",
    });
    res.end();
    return;
  }
  const route = `${method} /${parts[0] ?? ""}${parts.length > 1 ? "/:id" : ""}${parts[2] ? `/${parts[2]}` : ""}`;
  switch (route) {
    case "GET /health":
      if (!o.ready()) throw new HttpError(503, "the default contexts are starting");
      return json(res, 200, "OK");
    case "POST /execute":
      return execute(o, req, res, await body(req));
    case "GET /contexts":
      return json(res, 200, o.contexts.list());
    case "POST /contexts": {
      const b = await body(req);
      const language = languageOf(b.language);
      if (b.cwd !== undefined && b.cwd !== null && typeof b.cwd !== "string")
        throw invalid("cwd", "a string");
      try {
        return json(res, 200, (await o.contexts.create(language, (b.cwd as string) || undefined)).info);
      } catch (err) {
        throw new HttpError(500, `Failed to create context: ${(err as Error).message}`);
      }
    }
    case "DELETE /contexts/:id":
      await o.contexts.remove(parts[1]!);
      return json(res, 200, null);
    case "POST /contexts/:id/restart":
      await o.contexts.get(parts[1]!).restart();
      return json(res, 200, null);
    default:
      throw new HttpError(404, `${method} ${url.pathname} is not a route of the code interpreter`);
  }
}

async function execute(
  o: ServerOptions,
  req: IncomingMessage,
  res: ServerResponse,
  b: Record<string, unknown>,
): Promise<void> {
  if (typeof b.code !== "string") throw invalid("code", "a string");
  const contextId = b.context_id ?? undefined;
  const languageName = b.language ?? undefined;
  if (contextId !== undefined && languageName !== undefined)
    throw new HttpError(400, "Only one of context_id or language can be provided");
  if (contextId !== undefined && typeof contextId !== "string") throw invalid("context_id", "a string");
  const envVars = b.env_vars ?? undefined;
  if (
    envVars !== undefined &&
    (typeof envVars !== "object" ||
      Array.isArray(envVars) ||
      Object.values(envVars as object).some((v) => typeof v !== "string"))
  )
    throw invalid("env_vars", "an object of strings");
  let ctx: Context;
  if (typeof contextId === "string") ctx = o.contexts.get(contextId);
  else {
    try {
      ctx = await o.contexts.default(languageOf(languageName));
    } catch (err) {
      if (err instanceof HttpError) throw err;
      throw new HttpError(500, `Failed to create context: ${(err as Error).message}`);
    }
  }

  // the client's leaving (a closed connection or a reset stream) interrupts the cell
  const left = new AbortController();
  res.on("close", () => {
    if (!res.writableFinished) left.abort();
  });
  res.writeHead(200, {
    "Content-Type": "application/x-ndjson",
    "Cache-Control": "no-cache, no-transform",
    "X-Accel-Buffering": "no",
  });
  res.flushHeaders();
  let lastWrite = Date.now();
  const send = (msg: Record<string, unknown>) => {
    if (res.destroyed) return;
    res.write(`${JSON.stringify(msg)}\n`);
    lastWrite = Date.now();
  };
  const keepalive = setInterval(() => {
    if (Date.now() - lastWrite >= KEEPALIVE_MS) send({ type: "keepalive" });
  }, 1000);
  let errorSent = false;
  try {
    await ctx.execute(b.code, {
      envVars: envVars as Record<string, string> | undefined,
      accessToken: header(req, "x-access-token"),
      signal: left.signal,
      onEvent: (e) => {
        // E2B's clients keep one error per execution: the first
        if (e.ev === "error") {
          if (errorSent) return;
          errorSent = true;
        }
        send(streamMessage(e));
      },
    });
  } catch (err) {
    if (!errorSent) {
      const name = err instanceof KernelDiedError ? "UnexpectedEndOfExecution" : "ExecutionError";
      send({ type: "error", name, value: (err as Error).message, traceback: (err as Error).message });
    }
  } finally {
    clearInterval(keepalive);
  }
  send({ type: "end_of_execution" });
  res.end();
}

function languageOf(name: unknown) {
  if (name !== undefined && name !== null && typeof name !== "string") throw invalid("language", "a string");
  const language = normalizeLanguage(name as string | undefined);
  if (!language)
    throw new HttpError(400, `Unsupported language '${String(name)}': use one of ${LANGUAGES.join(", ")}`);
  return language;
}

function invalid(field: string, what: string): HttpError {
  return new HttpError(
    422,
    JSON.stringify({
      detail: [{ loc: ["body", field], msg: `${field} must be ${what}`, type: "type_error" }],
    }),
    true,
  );
}

function header(req: IncomingMessage, name: string): string | undefined {
  const v = req.headers[name];
  return Array.isArray(v) ? v[0] : v;
}

async function body(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new HttpError(413, `the request body is over ${MAX_BODY} bytes`);
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks).toString("utf8");
  if (!text.trim()) return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch (err) {
    throw new HttpError(
      422,
      JSON.stringify({
        detail: [
          { loc: ["body"], msg: `the body is not JSON: ${(err as Error).message}`, type: "json_invalid" },
        ],
      }),
      true,
    );
  }
  if (!parsed || typeof parsed !== "object" || Array.isArray(parsed))
    throw new HttpError(
      422,
      JSON.stringify({
        detail: [{ loc: ["body"], msg: "the body must be a JSON object", type: "dict_type" }],
      }),
      true,
    );
  return parsed as Record<string, unknown>;
}

function json(res: ServerResponse, status: number, value: unknown): void {
  const text = JSON.stringify(value);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

function fail(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const e =
    err instanceof HttpError
      ? err
      : err instanceof ContextNotFound
        ? new HttpError(404, err.message)
        : new HttpError(500, (err as Error).message ?? String(err));
  res.writeHead(e.status, {
    "Content-Type": e.json ? "application/json" : "text/plain; charset=utf-8",
    "Content-Length": Buffer.byteLength(e.message),
  });
  res.end(e.message);
}
