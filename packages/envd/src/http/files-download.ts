import { closeSync, openSync, readSync, type Stats } from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { createGzip, gzipSync } from "node:zlib";
import { headerValue } from "../auth.js";
import type { EnvdContext } from "../context.js";
import { resolvePath } from "../paths.js";
import { stat } from "../sync-fs.js";
import { authorizeFileRequest, requestUser } from "./access.js";
import { fsHttpError, HttpError, type HttpRequest, type HttpResponse } from "./respond.js";

/**
 * Bytes read from the file at a time: each read is a trip through libuv's thread pool, ~0.4 ms
 * inside gVisor, which at the default 64 KiB held a download to ~65 MB/s there.
 */
const READ_CHUNK_BYTES = 1 << 20;

/** The file's bytes in READ_CHUNK_BYTES pieces, the first `size` of them when given; `handle` stays open. */
function chunksOf(handle: FileHandle, size?: number) {
  const range = size === undefined ? {} : { start: 0, end: size - 1 };
  return handle.createReadStream({ autoClose: false, highWaterMark: READ_CHUNK_BYTES, ...range });
}

type Coding = "gzip" | "identity";

/**
 * Picks the response coding from `Accept-Encoding`. gzip only when asked for explicitly
 * (`gzip` is the only coding named, or identity is refused): fetch implementations send
 * `gzip, deflate[, br]` on every request, and compressing every download would cost far
 * more CPU than it saves on a sandbox's network. Identity is always acceptable unless
 * refused with q=0; undefined means nothing acceptable (406).
 */
export function negotiateCoding(header: string | undefined): Coding | undefined {
  if (!header?.trim()) return "identity";
  const q = new Map<string, number>();
  for (const item of header.split(",")) {
    const [rawName, ...params] = item.split(";");
    const name = rawName?.trim().toLowerCase();
    if (!name) continue;
    const qParam = params.map((p) => p.trim()).find((p) => /^q=/i.test(p));
    const value = qParam ? Number(qParam.slice(2)) : 1;
    q.set(name, Number.isFinite(value) ? value : 0);
  }
  const wildcard = q.get("*");
  const gzipQ = q.get("gzip") ?? q.get("x-gzip") ?? wildcard ?? 0;
  const identityQ = q.get("identity") ?? (wildcard === 0 ? 0 : 1);
  const others = [...q.keys()].filter((name) => !["gzip", "x-gzip", "identity", "*"].includes(name));
  const gzipRequested = (q.has("gzip") || q.has("x-gzip")) && others.length === 0;
  if (gzipQ > 0 && (gzipRequested || identityQ === 0)) return "gzip";
  return identityQ > 0 ? "identity" : undefined;
}

/** `attachment` with an ASCII fallback name and the exact name per RFC 6266 / 8187. */
function contentDisposition(name: string): string {
  const fallback = name.replace(/[^\x20-\x7e]|["\\]/g, "_");
  const encoded = encodeURIComponent(name).replace(
    /['()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );
  return `attachment; filename="${fallback}"; filename*=UTF-8''${encoded}`;
}

/** Stats a file a client wants to read: 404 when missing, 400 for a directory, FIFO or socket. */
export async function statForRead(file: string): Promise<Stats> {
  let st: Stats;
  try {
    st = await stat(file);
  } catch (err) {
    throw fsHttpError(err, "read", file);
  }
  if (st.isDirectory()) throw new HttpError(400, `path '${file}' is a directory`);
  // Opening a FIFO would block until a writer appears; a socket cannot be opened at all.
  if (st.isFIFO() || st.isSocket()) throw new HttpError(400, `path '${file}' is not a regular file`);
  return st;
}

/**
 * A regular file this small is read at once, synchronously: open, read and close through
 * libuv's thread pool cost ~0.4 ms each inside gVisor, most of a small read's time there.
 */
const SMALL_READ_MAX = 64 * 1024;

/** Up to `size` bytes of a small regular file (fewer when it shrank since its stat). */
function readSmallFile(file: string, size: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (err) {
    throw fsHttpError(err, "open", file);
  }
  try {
    const bytes = Buffer.allocUnsafe(size);
    let read = 0;
    while (read < size) {
      const n = readSync(fd, bytes, read, size - read, read);
      if (n === 0) break;
      read += n;
    }
    return bytes.subarray(0, read);
  } catch (err) {
    throw fsHttpError(err, "read", file);
  } finally {
    closeSync(fd);
  }
}

/** `GET /files`: the file's bytes, gzip-compressed when the client asks for it. */
export async function downloadFile(
  ctx: EnvdContext,
  req: HttpRequest,
  res: HttpResponse,
  query: URLSearchParams,
): Promise<void> {
  authorizeFileRequest(ctx.state, req, query, "read");
  const user = await requestUser(ctx.state, req, query.get("username"));
  const input = query.get("path");
  if (!input) throw new HttpError(400, "missing 'path' query parameter");
  const file = resolvePath(input, user);
  const st = await statForRead(file);
  const coding = negotiateCoding(headerValue(req.headers, "accept-encoding"));
  if (!coding) throw new HttpError(406, "no acceptable encoding; supported: identity, gzip");

  const headers: Record<string, string | number> = {
    "content-type": "application/octet-stream",
    "content-disposition": contentDisposition(path.basename(file)),
    "cache-control": "no-store",
    vary: "Accept-Encoding",
  };
  if (st.isFile() && st.size <= SMALL_READ_MAX) {
    const bytes = readSmallFile(file, st.size);
    if (coding === "gzip") {
      res.writeHead(200, { ...headers, "content-encoding": "gzip" });
      res.end(gzipSync(bytes));
    } else {
      res.writeHead(200, { ...headers, "content-length": bytes.length });
      res.end(bytes);
    }
    return;
  }

  let handle: FileHandle;
  try {
    handle = await open(file, "r");
  } catch (err) {
    throw fsHttpError(err, "open", file);
  }
  try {
    if (coding === "gzip") {
      res.writeHead(200, { ...headers, "content-encoding": "gzip" });
      await pipeline(chunksOf(handle), createGzip(), res);
      return;
    }
    // Devices have no meaningful size: stream them until EOF without a length.
    if (!st.isFile()) {
      res.writeHead(200, headers);
      await pipeline(chunksOf(handle), res);
      return;
    }
    // (an empty file went the small-file way above)
    res.writeHead(200, { ...headers, "content-length": st.size });
    // Bounded by the size announced in Content-Length, even if the file grows meanwhile.
    await pipeline(chunksOf(handle, st.size), res);
  } finally {
    await handle.close();
  }
}
