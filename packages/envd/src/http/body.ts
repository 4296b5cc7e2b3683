import type { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import { headerValue } from "../auth.js";
import { HttpError, type HttpRequest } from "./respond.js";

/** Small JSON bodies only (compose, init): anything bigger is a mistake, not data. */
const JSON_LIMIT = 1 << 20;

/** Reads a JSON body; an empty body is `undefined`. */
export async function readJson(req: HttpRequest): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > JSON_LIMIT) throw new HttpError(413, `request body is larger than ${JSON_LIMIT} bytes`);
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString("utf8").trim();
  if (!text) return undefined;
  try {
    return JSON.parse(text);
  } catch (err) {
    throw new HttpError(400, `request body is not valid JSON: ${(err as Error).message}`);
  }
}

/**
 * Errors of a body stream surface where it is read (an iterator, busboy); this only keeps
 * one emitted while nobody reads yet (awaiting mkdir, say) from crashing the process.
 */
export function observeErrors(stream: Readable): void {
  stream.on("error", () => undefined);
}

/** The request body with its `Content-Encoding` (identity or gzip) undone. */
export function decodedBody(req: HttpRequest): Readable {
  const encoding = (headerValue(req.headers, "content-encoding") ?? "identity").trim().toLowerCase();
  if (encoding !== "identity" && encoding !== "" && encoding !== "gzip" && encoding !== "x-gzip") {
    throw new HttpError(400, `unsupported Content-Encoding '${encoding}'; supported: identity, gzip`);
  }
  observeErrors(req);
  if (encoding === "identity" || encoding === "") return req;
  const gunzip = createGunzip();
  observeErrors(gunzip);
  // Not pipeline(): it would destroy the request (and the socket) on a bad gzip stream,
  // leaving no way to answer 400.
  req.on("error", (err) => gunzip.destroy(err));
  return req.pipe(gunzip);
}

/** Discards what is left of the body so the connection stays usable for the error response. */
export function drain(req: HttpRequest): void {
  req.unpipe();
  req.resume();
}

/** True for zlib's errors on a corrupt or truncated gzip stream. */
export function isGzipError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("Z_");
}
