import http from "node:http";
import net from "node:net";
import tls from "node:tls";
import { type Exchange, type ExchangeContext, resetConnection, type Upstream } from "./exchanges.js";
import { clientAddress, clientProto, downstreamRawHeaders, upstreamRequestHeaders } from "./headers.js";
import { headerBlock } from "./replies.js";
import type { ProxyTarget } from "./routing.js";

/**
 * An `Upgrade` request (WebSocket and others) to a sandbox: forwarded on a dedicated upstream
 * connection; after the 101 the two sockets are joined, half-close kept. A refused upgrade is
 * passed on and the connection ends.
 */
export function tunnel(
  ctx: ExchangeContext,
  target: ProxyTarget,
  to: Upstream,
  req: http.IncomingMessage,
  socket: net.Socket,
  head: Buffer,
): void {
  const metrics = ctx.metrics;
  const connections = ctx.connectionsOf(target.sandboxID);
  const port = to.port ?? target.port;
  const { address } = to;
  const up = http.request({
    host: address,
    port,
    method: req.method,
    path: req.url,
    headers: upstreamRequestHeaders(req.rawHeaders, {
      clientAddress: clientAddress(socket),
      proto: clientProto(socket),
      trusted: ctx.trusted,
      upgrade: true,
      ...(to.host !== undefined ? { host: to.host } : {}),
    }),
    // Dedicated and half-open: after the 101 this socket is one end of a raw tunnel.
    createConnection: () => {
      const socket = net.connect({ host: address, port, allowHalfOpen: true, noDelay: true });
      // the sandbox's own HTTPS server: its certificate cannot be checked (see httpsPorts)
      return to.tls ? tls.connect({ socket, rejectUnauthorized: false }) : socket;
    },
  });
  let tunnel: net.Socket | undefined;
  let answered = false;
  const exchange: Exchange = {
    cut: () => {
      metrics.errors.cut++;
      if (tunnel) resetConnection(tunnel);
      up.destroy();
      socket.destroy();
    },
  };
  metrics.active++;
  connections.exchanges.add(exchange);
  // A side that closes cleanly may leave bytes queued for the other: flush them, then close.
  socket.once("close", (hadError: boolean) => {
    metrics.active--;
    connections.exchanges.delete(exchange);
    if (!tunnel) up.destroy();
    else if (hadError) tunnel.destroy();
    else tunnel.destroySoon();
  });

  up.once("socket", ctx.onUpstreamSocket);
  up.on("upgrade", (res: http.IncomingMessage, upstream: net.Socket, upstreamHead: Buffer) => {
    answered = true;
    tunnel = upstream;
    metrics.responses[101] = (metrics.responses[101] ?? 0) + 1;
    upstream.on("error", () => socket.destroy());
    upstream.once("close", (hadError: boolean) => (hadError ? socket.destroy() : socket.destroySoon()));
    if (socket.destroyed) return void upstream.destroy();
    socket.write(
      `HTTP/1.1 101 ${res.statusMessage || "Switching Protocols"}\r\n${headerBlock(res.rawHeaders)}\r\n`,
    );
    if (upstreamHead.length > 0) {
      metrics.bytesToClients += upstreamHead.length;
      socket.write(upstreamHead);
    }
    if (head.length > 0) {
      metrics.bytesFromClients += head.length;
      upstream.write(head);
    }
    socket.on("data", ctx.countFromClient);
    upstream.on("data", ctx.countToClient);
    socket.pipe(upstream);
    upstream.pipe(socket);
  });
  up.on("response", (res: http.IncomingMessage) => {
    // Refused upgrade: pass the answer on and end the connection, whose framing is now ours.
    answered = true;
    const status = res.statusCode ?? 502;
    metrics.responses[status] = (metrics.responses[status] ?? 0) + 1;
    socket.write(
      `HTTP/1.1 ${status} ${res.statusMessage ?? ""}\r\n${headerBlock(downstreamRawHeaders(res.rawHeaders))}Connection: close\r\n\r\n`,
    );
    res.on("data", ctx.countToClient);
    res.pipe(socket);
  });
  up.on("error", (err: NodeJS.ErrnoException) => {
    if (answered || socket.destroyed) return void socket.destroy();
    ctx.replyRaw(socket, ctx.upstreamError(target, err));
  });
  up.end();
}
