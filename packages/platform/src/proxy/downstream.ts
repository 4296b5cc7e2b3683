import type http from "node:http";
import type http2 from "node:http2";
import type { Writable } from "node:stream";
import { downstreamH2Headers, downstreamRawHeaders } from "./headers.js";
import type { ErrorReply } from "./replies.js";

/** The client's side of one exchange, for HTTP/1.1 and HTTP/2 alike. */
export interface Downstream {
  /** True once the client has gone away. */
  readonly gone: boolean;
  /** Sends the sandbox's response head; returns where the body goes, or null when it has none. */
  head(res: http.IncomingMessage): Writable | null;
  /** Answers with the proxy's own error. */
  reply(error: ErrorReply): void;
  destroy(): void;
  onClose(listener: () => void): void;
}

export class H1Downstream implements Downstream {
  /** `extra`: raw header pairs every answer gets (envd's CORS headers: cors.ts). */
  constructor(
    private readonly res: http.ServerResponse,
    private readonly extra: string[] = [],
  ) {}

  get gone(): boolean {
    return this.res.destroyed;
  }

  head(upstream: http.IncomingMessage): Writable | null {
    const res = this.res;
    const status = upstream.statusCode ?? 502;
    res.writeHead(status, upstream.statusMessage, [
      ...downstreamRawHeaders(upstream.rawHeaders),
      ...this.extra,
    ]);
    // A body of unknown length may be a stream: show the head now, not with the first message.
    if (upstream.headers["content-length"] === undefined && status !== 204 && status !== 304)
      res.flushHeaders();
    if (upstream.headers["transfer-encoding"] !== undefined) {
      upstream.once("end", () => {
        const raw = upstream.rawTrailers;
        if (raw.length === 0) return;
        const trailers: [string, string][] = [];
        for (let i = 0; i < raw.length; i += 2) trailers.push([raw[i]!, raw[i + 1]!]);
        res.addTrailers(trailers);
      });
    }
    return res;
  }

  reply(error: ErrorReply): void {
    const res = this.res;
    if (res.headersSent) return void res.destroy();
    const body = JSON.stringify(error.body);
    res.writeHead(error.status, [
      "Content-Type",
      "application/json",
      "Content-Length",
      String(Buffer.byteLength(body)),
      ...this.extra,
    ]);
    res.end(body);
  }

  destroy(): void {
    this.res.destroy();
  }

  onClose(listener: () => void): void {
    this.res.once("close", listener);
  }
}

export class H2Downstream implements Downstream {
  /** `extra`: raw header pairs every answer gets (envd's CORS headers: cors.ts). */
  constructor(
    private readonly stream: http2.ServerHttp2Stream,
    private readonly extra: string[] = [],
  ) {}

  private withExtra<T extends http2.OutgoingHttpHeaders>(headers: T): T {
    for (let i = 0; i < this.extra.length; i += 2)
      (headers as http2.OutgoingHttpHeaders)[(this.extra[i] as string).toLowerCase()] = this.extra[i + 1];
    return headers;
  }

  get gone(): boolean {
    return this.stream.destroyed;
  }

  head(upstream: http.IncomingMessage): Writable | null {
    const stream = this.stream;
    const withTrailers = upstream.headers.trailer !== undefined;
    stream.respond(
      this.withExtra(downstreamH2Headers(upstream)),
      withTrailers ? { waitForTrailers: true } : undefined,
    );
    if (withTrailers) stream.once("wantTrailers", () => stream.sendTrailers(upstream.trailers));
    // HEAD, 204 and 304 end the stream with the head.
    return stream.writableEnded ? null : stream;
  }

  reply(error: ErrorReply): void {
    const stream = this.stream;
    if (stream.headersSent) {
      this.destroy();
      return;
    }
    const body = JSON.stringify(error.body);
    stream.respond(
      this.withExtra({
        ":status": error.status,
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
      }),
    );
    stream.end(body);
    stream.resume(); // discard an unread request body so the client is not held by flow control
  }

  destroy(): void {
    // An error resets at once with INTERNAL_ERROR; close(code) would first end the stream cleanly.
    this.stream.destroy(new Error("sandbox exchange cut"));
  }

  onClose(listener: () => void): void {
    this.stream.once("close", listener);
  }
}
