import http from "node:http";
import https from "node:https";
import type { Readable, Writable } from "node:stream";
import type { Downstream } from "./downstream.js";
import type { Exchange, ExchangeContext, Upstream } from "./exchanges.js";
import type { ProxyTarget } from "./routing.js";

/** Sends one request to the sandbox and its response back; retries once a bodiless request on a stale pooled socket. */
export function forward(
  ctx: ExchangeContext,
  target: ProxyTarget,
  to: Upstream,
  method: string,
  path: string,
  headers: string[],
  body: Readable | null,
  down: Downstream,
): void {
  const metrics = ctx.metrics;
  const connections = ctx.connectionsOf(target.sandboxID);
  let up: http.ClientRequest | undefined;
  let upstream: http.IncomingMessage | undefined;
  let ending = false; // the proxy itself is ending the exchange: not a client abort

  const exchange: Exchange = {
    cut: () => {
      metrics.errors.cut++;
      ending = true;
      up?.destroy();
      down.destroy();
    },
  };

  const onResponse = (res: http.IncomingMessage): void => {
    upstream = res;
    const status = res.statusCode ?? 502;
    metrics.responses[status] = (metrics.responses[status] ?? 0) + 1;
    res.on("close", () => {
      if (res.complete || down.gone) return;
      metrics.errors.upstream_aborted++;
      ending = true;
      down.destroy();
    });
    let sink: Writable | null;
    try {
      sink = down.head(res);
    } catch (err) {
      ctx.log.warn(
        {
          sandboxId: target.sandboxID,
          err,
        },
        "could not pass a sandbox response on",
      );
      ending = true;
      up?.destroy();
      down.destroy();
      return;
    }
    if (!sink) return void res.resume();
    res.on("data", ctx.countToClient);
    res.pipe(sink);
  };

  const send = (attempt: number): void => {
    let request: http.ClientRequest;
    try {
      const options = { host: to.address, port: to.port ?? target.port, method, path, headers };
      request = to.tls
        ? https.request({ ...options, agent: connections.tlsAgent })
        : http.request({ ...options, agent: connections.agent });
    } catch (err) {
      ending = true;
      ctx.replyWith(down, {
        status: 400,
        kind: "bad_request",
        body: { code: 400, message: `The request cannot be forwarded: ${(err as Error).message}` },
      });
      return;
    }
    up = request;
    request.once("socket", ctx.onUpstreamSocket);
    request.on("response", onResponse);
    request.on("error", (err: NodeJS.ErrnoException) => {
      if (upstream || down.gone) return;
      if (
        !body &&
        attempt === 0 &&
        request.reusedSocket &&
        (err.code === "ECONNRESET" || err.code === "EPIPE")
      ) {
        return send(1); // the sandbox closed an idle pooled connection just as it was reused
      }
      ctx.replyWith(down, ctx.upstreamError(target, err));
    });
    if (body && attempt === 0) {
      // Send the head now unless body bytes already wait to go with it: a streaming client
      // may wait for the response head before it writes.
      if (body.readableLength === 0) request.flushHeaders();
      body.on("data", ctx.countFromClient);
      body.pipe(request);
    } else {
      request.end();
    }
  };

  metrics.active++;
  connections.exchanges.add(exchange);
  down.onClose(() => {
    metrics.active--;
    connections.exchanges.delete(exchange);
    if (upstream?.complete) {
      // A request body still going out would hold its pooled socket forever.
      if (!up?.writableFinished) up?.destroy();
      return;
    }
    if (!ending) metrics.errors.client_aborted++;
    up?.destroy();
  });
  send(0);
}
