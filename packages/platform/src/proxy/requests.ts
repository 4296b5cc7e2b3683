/**
 * From a client's request to an exchange with a sandbox, one function per way it arrives
 * (an HTTP/1.1 request, an HTTP/2 stream, an `Upgrade`): its target, where that is
 * (locate.ts), then forwarded (forward.ts) or tunnelled (tunnel.ts); or the proxy's own error.
 */
import type http from "node:http";
import type http2 from "node:http2";
import type net from "node:net";
import { corsHeadersFor, isEnvdPreflight, preflightAnswer } from "./cors.js";
import { H1Downstream, H2Downstream } from "./downstream.js";
import type { ExchangeContext } from "./exchanges.js";
import { forward } from "./forward.js";
import { clientAddress, clientProto, rawFromH2, upstreamRequestHeaders } from "./headers.js";
import { isUpstream, type SandboxLocator } from "./locate.js";
import { type ErrorReply, TRAFFIC_TOKEN_HEADER } from "./replies.js";
import { parseTarget } from "./routing.js";
import { tunnel } from "./tunnel.js";

/** What taking in a request uses of the proxy: the exchange context, where sandboxes are, the 400. */
export interface RequestContext extends ExchangeContext {
  readonly locator: SandboxLocator;
  /** The answer to a request without routing information. */
  readonly noRouteReply: ErrorReply;
}

const ignore = (): void => {};

const lowerKeys = (headers: Record<string, string>) =>
  Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));

export async function onRequest(
  ctx: RequestContext,
  req: http.IncomingMessage,
  res: http.ServerResponse,
): Promise<void> {
  ctx.metrics.requests++;
  const headers = req.headers;
  const routed = parseTarget(headers["e2b-sandbox-id"], headers["e2b-sandbox-port"], headers.host);
  if (isEnvdPreflight(req.method ?? "GET", headers, routed)) {
    res.writeHead(204, preflightAnswer(headers));
    return void res.end();
  }
  const signed = routed
    ? undefined
    : await ctx.locator.signedTarget(req.method ?? "GET", req.url ?? "/", clientAddress(req.socket));
  const target = routed ?? (signed && "sandboxID" in signed ? signed : undefined);
  const down = new H1Downstream(res, corsHeadersFor(target, headers.origin));
  if (signed && "status" in signed) return ctx.replyWith(down, signed);
  if (!target) return ctx.replyWith(down, ctx.noRouteReply);
  const to = await ctx.locator.locate(target, headers[TRAFFIC_TOKEN_HEADER]);
  if (!isUpstream(to)) return ctx.replyWith(down, to);
  if (down.gone) return;
  const length = headers["content-length"];
  const hasBody = length !== undefined ? length !== "0" : headers["transfer-encoding"] !== undefined;
  const upstreamHeaders = upstreamRequestHeaders(req.rawHeaders, {
    clientAddress: clientAddress(req.socket),
    proto: clientProto(req.socket),
    trusted: ctx.trusted,
    upgrade: false,
    ...(to.host !== undefined ? { host: to.host } : {}),
  });
  forward(ctx, target, to, req.method ?? "GET", req.url ?? "/", upstreamHeaders, hasBody ? req : null, down);
}

export async function onStream(
  ctx: RequestContext,
  stream: http2.ServerHttp2Stream,
  headers: http2.IncomingHttpHeaders,
): Promise<void> {
  ctx.metrics.requests++;
  stream.on("error", ignore); // resets surface as "close"; nothing else to do with them
  const method = headers[":method"] ?? "GET";
  const routed = parseTarget(
    headers["e2b-sandbox-id"],
    headers["e2b-sandbox-port"],
    headers[":authority"] ?? headers.host,
  );
  if (isEnvdPreflight(method, headers, routed)) {
    stream.respond({ ":status": 204, ...lowerKeys(preflightAnswer(headers)) });
    return void stream.end();
  }
  const signed = routed
    ? undefined
    : await ctx.locator.signedTarget(method, headers[":path"] ?? "/", clientAddress(stream.session?.socket));
  const target = routed ?? (signed && "sandboxID" in signed ? signed : undefined);
  const down = new H2Downstream(stream, corsHeadersFor(target, headers.origin));
  if (signed && "status" in signed) return ctx.replyWith(down, signed);
  if (method === "CONNECT") {
    return ctx.replyWith(down, {
      status: 405,
      kind: "bad_request",
      body: { code: 405, message: "CONNECT is not supported by the sandbox proxy" },
    });
  }
  if (!target) return ctx.replyWith(down, ctx.noRouteReply);
  const to = await ctx.locator.locate(target, headers[TRAFFIC_TOKEN_HEADER]);
  if (!isUpstream(to)) return ctx.replyWith(down, to);
  if (down.gone) return;
  const upstreamHeaders = upstreamRequestHeaders(rawFromH2(headers), {
    clientAddress: clientAddress(stream.session?.socket),
    proto: clientProto(stream.session?.socket),
    trusted: ctx.trusted,
    upgrade: false,
    ...(to.host !== undefined ? { host: to.host } : {}),
  });
  forward(
    ctx,
    target,
    to,
    method,
    headers[":path"] ?? "/",
    upstreamHeaders,
    stream.endAfterHeaders ? null : stream,
    down,
  );
}

export async function onUpgrade(
  ctx: RequestContext,
  req: http.IncomingMessage,
  socket: net.Socket,
  head: Buffer,
): Promise<void> {
  const metrics = ctx.metrics;
  metrics.requests++;
  metrics.upgrades++;
  socket.setTimeout(0); // a tunnel may idle for as long as both ends like
  const headers = req.headers;
  const target = parseTarget(headers["e2b-sandbox-id"], headers["e2b-sandbox-port"], headers.host);
  if (!target) return ctx.replyRaw(socket, ctx.noRouteReply);
  const to = await ctx.locator.locate(target, headers[TRAFFIC_TOKEN_HEADER]);
  if (!isUpstream(to)) return ctx.replyRaw(socket, to);
  if (socket.destroyed) return;

  tunnel(ctx, target, to, req, socket, head);
}
