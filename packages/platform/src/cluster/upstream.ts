/**
 * One request sent on to a node, and an honest account of how it went. What the api may tell
 * its caller depends on what the node can have done: a request the node never received can be
 * sent again (503 and `Retry-After`); one it may have acted on cannot, blindly, or a create
 * retried as told makes a second sandbox (502, no retry hint; creates are reconciled,
 * create-reconcile.ts).
 */
import http, { type ServerResponse } from "node:http";
import type { Readable } from "node:stream";

/** How sending a request to a node went. */
export type Outcome =
  /** The node answered and its answer was passed on (a stream cut short after that is cut here too). */
  | { kind: "answered"; status: number }
  /** The node cannot have acted on it: no connection, or it never had the whole request. */
  | { kind: "not-received"; reason: string }
  /** The node had the whole request and gave no answer: it may have acted on it. */
  | { kind: "may-have-acted"; reason: string };

export type Failed = Exclude<Outcome, { kind: "answered" }>;

/** How far a request got before it failed. */
export interface Progress {
  /** A TCP connection to the node was open (a fresh one established, or a kept-alive one reused). */
  connected: boolean;
  /** Every byte of the request (head and body) was handed to the kernel. */
  sent: boolean;
}

/**
 * Whether the node may have acted on a request that failed at `progress`. Certain only when
 * it cannot have: nothing connected (refused, unreachable, no such host, connect timeout), or
 * the request was not all sent and the operation acts only on a whole request (a JSON body, or
 * none: the node reads it all first). A streamed body (an upload) may be acted on as it
 * arrives, and anything sent whole may have been acted on, whatever came back (a reset, a
 * timeout, an answer that does not parse).
 */
export function classify(progress: Progress, actsOnWholeRequest: boolean): Failed["kind"] {
  if (!progress.connected) return "not-received";
  if (!progress.sent && actsOnWholeRequest) return "not-received";
  return "may-have-acted";
}

/** Response headers about one connection (RFC 9110 7.6.1): this hop's, not passed on. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "transfer-encoding", "te", "upgrade", "trailer"]);

export function endToEnd(headers: http.IncomingHttpHeaders): http.OutgoingHttpHeaders {
  return Object.fromEntries(Object.entries(headers).filter(([name]) => !HOP_BY_HOP.has(name)));
}

export interface UpstreamRequest {
  url: URL;
  method: string;
  headers: http.OutgoingHttpHeaders;
  agent?: http.Agent;
  /** The body: read already (a Buffer), or the caller's request to stream on. */
  body: Buffer | Readable | undefined;
  /** Whether the node acts only on the whole request (see classify). */
  actsOnWholeRequest: boolean;
  /** A connection not open by then is given up: the node never had the request. */
  connectTimeoutMs: number;
  /** An answer not begun by then (after the whole request was sent) is given up: the node may have acted. */
  responseTimeoutMs: number;
}

/**
 * Sends `up` to the node and passes its answer to `res`. On failure nothing is written to
 * `res`: the caller answers by the outcome.
 */
export function sendUpstream(up: UpstreamRequest, res: ServerResponse): Promise<Outcome> {
  return new Promise((resolve) => {
    const progress: Progress = { connected: false, sent: false };
    let settled = false;
    const settle = (outcome: Outcome | { kind: Failed["kind"]; reason: string }) => {
      if (settled) return;
      settled = true;
      clearTimeout(connectTimer);
      clearTimeout(responseTimer);
      resolve(outcome as Outcome);
    };
    let responseTimer: NodeJS.Timeout | undefined;
    const request = http.request(up.url, { method: up.method, headers: up.headers, agent: up.agent });
    const connectTimer = setTimeout(() => {
      if (!progress.connected) request.destroy(failure("ECONNECTTIMEOUT", "no connection in time"));
    }, up.connectTimeoutMs);
    request.on("socket", (socket) => {
      if (!socket.connecting) progress.connected = true;
      else socket.once("connect", () => (progress.connected = true));
    });
    request.on("finish", () => {
      progress.sent = true;
      responseTimer = setTimeout(
        () => request.destroy(failure("ERESPONSETIMEOUT", `no answer in ${up.responseTimeoutMs} ms`)),
        up.responseTimeoutMs,
      );
    });
    request.on("response", (answer) => {
      clearTimeout(responseTimer);
      res.writeHead(answer.statusCode ?? 502, endToEnd(answer.headers));
      answer.pipe(res);
      const status = answer.statusCode ?? 502;
      answer.on("end", () => settle({ kind: "answered", status }));
      answer.on("error", () => {
        res.destroy();
        settle({ kind: "answered", status });
      });
    });
    request.on("error", (err: NodeJS.ErrnoException) => {
      if (res.headersSent) {
        // cut short in the answer: the caller sees the stream end early
        res.destroy();
        return settle({ kind: "answered", status: res.statusCode });
      }
      settle({ kind: classify(progress, up.actsOnWholeRequest), reason: err.code ?? err.message });
    });
    // destroyed without an error (the caller went away): accounted for all the same
    request.on("close", () =>
      settle(
        res.headersSent
          ? { kind: "answered", status: res.statusCode }
          : { kind: classify(progress, up.actsOnWholeRequest), reason: "closed" },
      ),
    );
    res.on("close", () => {
      if (!res.writableFinished) request.destroy();
    });
    if (Buffer.isBuffer(up.body)) request.end(up.body);
    else if (up.body) up.body.pipe(request);
    else request.end();
  });
}

function failure(code: string, message: string): NodeJS.ErrnoException {
  return Object.assign(new Error(message), { code });
}
