import type { IncomingMessage, OutgoingHttpHeaders } from "node:http";
import type { Http2ServerRequest } from "node:http2";
import type { Writable } from "node:stream";
import { describeErrno, errnoOf, fsHttpStatus } from "../errors.js";

export type HttpRequest = IncomingMessage | Http2ServerRequest;

/** What the routes use of a response; `http.ServerResponse` and `Http2ServerResponse` both fit. */
export interface HttpResponse extends Writable {
  statusCode: number;
  readonly headersSent: boolean;
  setHeader(name: string, value: number | string | readonly string[]): unknown;
  writeHead(statusCode: number, headers?: OutgoingHttpHeaders): unknown;
}

/** A failure with the status and `{message, code}` body the routes answer with (seed section 7). */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
    this.name = "HttpError";
  }
}

export function sendJson(res: HttpResponse, status: number, value: unknown): void {
  const body = Buffer.from(JSON.stringify(value));
  res.writeHead(status, {
    "content-type": "application/json",
    "content-length": body.length,
    "cache-control": "no-store",
  });
  res.end(body);
}

export function sendError(res: HttpResponse, status: number, message: string): void {
  sendJson(res, status, { message, code: status });
}

export function sendEmpty(res: HttpResponse, status: number): void {
  res.writeHead(status, { "cache-control": "no-store" });
  res.end();
}

/** Turns a filesystem failure into an HttpError whose message names the path. */
export function fsHttpError(err: unknown, action: string, path: string): HttpError {
  if (err instanceof HttpError) return err;
  const errno = errnoOf(err);
  const status = fsHttpStatus(err);
  const options = { cause: err };
  switch (status) {
    case 404:
      return new HttpError(404, `path '${path}' does not exist`, options);
    case 507:
      return new HttpError(507, `not enough disk space available to ${action} '${path}'`, options);
    default: {
      const reason = describeErrno(errno) ?? (err instanceof Error ? err.message : String(err));
      return new HttpError(status, `cannot ${action} '${path}': ${reason}`, options);
    }
  }
}
