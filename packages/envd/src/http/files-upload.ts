import path from "node:path";
import { Readable } from "node:stream";
import type { EnvdComponents } from "@x/envd-client";
import busboy from "busboy";
import { headerValue } from "../auth.js";
import type { EnvdContext } from "../context.js";
import { resolvePath } from "../paths.js";
import type { User } from "../users.js";
import { authorizeFileRequest, requestUser } from "./access.js";
import { decodedBody, drain, isGzipError, observeErrors } from "./body.js";
import { SMALL_FILE_MAX, writeFileFromStream, writeSmallFile } from "./file-writer.js";
import { HttpError, type HttpRequest, type HttpResponse, sendJson } from "./respond.js";

export type WrittenEntry = EnvdComponents["schemas"]["EntryInfo"];

const METADATA_PREFIX = "x-metadata-";
/** Limits of the public API: an xattr name is at most 255 bytes, 9 of them the namespace. */
const METADATA_KEY_MAX = 246;
const METADATA_TOTAL_MAX = 4096;
const METADATA_NAMESPACE_BYTES = 9;
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;

/**
 * `X-Metadata-<key>: <value>` headers as metadata: keys lowercased, the first of repeated
 * headers wins, printable ASCII only, within the size limits (400 otherwise).
 */
export function metadataFromHeaders(rawHeaders: string[]): Record<string, string> {
  // A Map, so that a key like `__proto__` is data rather than a prototype assignment.
  const metadata = new Map<string, string>();
  let total = 0;
  for (let i = 0; i + 1 < rawHeaders.length; i += 2) {
    const name = (rawHeaders[i] ?? "").toLowerCase();
    if (!name.startsWith(METADATA_PREFIX)) continue;
    const key = name.slice(METADATA_PREFIX.length);
    const value = rawHeaders[i + 1] ?? "";
    if (metadata.has(key)) continue;
    if (!key) throw new HttpError(400, "metadata header 'X-Metadata-' has no key");
    if (Buffer.byteLength(key) > METADATA_KEY_MAX) {
      throw new HttpError(400, `metadata key '${key}' is longer than ${METADATA_KEY_MAX} bytes`);
    }
    if (!PRINTABLE_ASCII.test(value))
      throw new HttpError(400, `metadata value for '${key}' must be printable US-ASCII`);
    total += METADATA_NAMESPACE_BYTES + Buffer.byteLength(key) + Buffer.byteLength(value);
    if (total > METADATA_TOTAL_MAX)
      throw new HttpError(400, `metadata is larger than ${METADATA_TOTAL_MAX} bytes in total`);
    metadata.set(key, value);
  }
  return Object.fromEntries(metadata);
}

function entryFor(file: string, metadata: Record<string, string>): WrittenEntry {
  return {
    path: file,
    name: path.basename(file),
    type: "file",
    ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
  };
}

interface UploadTarget {
  user: User;
  /** The `path` query: where a single file goes; undefined means "each part's filename". */
  path: string | undefined;
  metadata: Record<string, string>;
}

/** The body is one file, written to `path`. */
async function uploadRaw(body: Readable, target: UploadTarget): Promise<WrittenEntry[]> {
  if (!target.path)
    throw new HttpError(400, "missing 'path' query parameter for an application/octet-stream upload");
  const file = resolvePath(target.path, target.user);
  await writeFileFromStream(file, body, target.user, target.metadata);
  return [entryFor(file, target.metadata)];
}

/**
 * The whole of a part stream when it ends within SMALL_FILE_MAX bytes; otherwise undefined, with
 * what was read put back (unshift) for the streaming path. A failing stream is left to that path.
 */
async function gatherSmall(stream: Readable): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let size = 0;
  let failed = false;
  const done = await new Promise<boolean>((resolve) => {
    const finish = (ended: boolean) => {
      stream.off("data", onData);
      stream.off("end", onEnd);
      stream.off("error", onError);
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > SMALL_FILE_MAX) {
        stream.pause();
        finish(false);
      }
    };
    const onEnd = () => finish(true);
    const onError = () => {
      failed = true;
      finish(false);
    };
    stream.on("data", onData);
    stream.once("end", onEnd);
    stream.once("error", onError);
  });
  if (done) return chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size);
  stream.pause();
  // after an error the stream has nothing more to give: the streaming path reports it
  if (!failed) for (let i = chunks.length - 1; i >= 0; i--) stream.unshift(chunks[i]);
  return undefined;
}

/** The largest `file` part without a filename: busboy hands such a part over whole, in memory. */
const FIELD_FILE_MAX = 16 << 20;

/** Parts named `file`, written one after the other as busboy streams them (never buffered whole). */
function uploadMultipart(req: HttpRequest, body: Readable, target: UploadTarget): Promise<WrittenEntry[]> {
  return new Promise((resolve, reject) => {
    let parser: busboy.Busboy;
    try {
      // preservePath: the filename is the destination path; utf8: FormData sends raw UTF-8 names.
      parser = busboy({
        headers: req.headers,
        preservePath: true,
        defParamCharset: "utf8",
        defCharset: "latin1",
        limits: { fieldSize: FIELD_FILE_MAX },
      });
    } catch (err) {
      reject(new HttpError(400, `invalid multipart request: ${(err as Error).message}`));
      return;
    }
    const written: WrittenEntry[] = [];
    const paths = new Set<string>();
    /** Directories this upload made sure of (the common case: many files in a few directories). */
    const knownDirs = new Set<string>();
    let failure: unknown;
    let queue = Promise.resolve();
    const fail = (err: unknown) => {
      failure ??= err;
    };

    /** Writes one `file` part; `filename` is the part's, the query's `path` wins over it. */
    const writePart = async (filename: string | undefined, stream: Readable) => {
      const name = target.path ?? filename;
      if (!name) throw new HttpError(400, "a 'file' part has no filename and the query has no 'path'");
      const file = resolvePath(name, target.user);
      if (paths.has(file)) {
        throw new HttpError(
          400,
          `more than one part is written to '${file}'; only one file per path in an upload`,
        );
      }
      paths.add(file);
      const whole = await gatherSmall(stream);
      if (whole) await writeSmallFile(file, whole, target.user, target.metadata, knownDirs);
      else await writeFileFromStream(file, stream, target.user, target.metadata);
      written.push(entryFor(file, target.metadata));
    };

    parser.on("file", (field, stream, info) => {
      observeErrors(stream);
      queue = queue.then(async () => {
        if (field !== "file" || failure !== undefined) {
          stream.resume();
          return;
        }
        try {
          await writePart(info.filename, stream);
        } catch (err) {
          fail(err);
          stream.resume();
        }
      });
    });
    // A `file` part without a filename (`form.append('file', 'text')`, as E2B's envd accepts
    // with the query's `path`) is a plain field to busboy: its value arrives whole, in latin1 so
    // that its bytes are kept exactly.
    parser.on("field", (field, value, info) => {
      if (field !== "file") return;
      queue = queue.then(async () => {
        if (failure !== undefined) return;
        try {
          if (info.valueTruncated)
            throw new HttpError(
              413,
              `a 'file' part without a filename is limited to ${FIELD_FILE_MAX} bytes; give the part a filename`,
            );
          await writePart(undefined, Readable.from([Buffer.from(value, "latin1")]));
        } catch (err) {
          fail(err);
        }
      });
    });
    parser.on("error", (err) => {
      fail(
        isGzipError(err)
          ? new HttpError(400, "cannot decompress the body: invalid gzip data")
          : new HttpError(400, `invalid multipart body: ${(err as Error).message}`),
      );
      queue.then(() => reject(failure));
    });
    parser.on("close", () => {
      queue.then(() => {
        if (failure !== undefined) reject(failure);
        else if (written.length === 0) reject(new HttpError(400, "the multipart body has no 'file' part"));
        else resolve(written);
      });
    });
    body.on("error", (err) => parser.destroy(err));
    body.pipe(parser);
  });
}

/** `POST /files`: multipart/form-data (one or many parts) or a raw body, optionally gzip. */
export async function uploadFiles(
  ctx: EnvdContext,
  req: HttpRequest,
  res: HttpResponse,
  query: URLSearchParams,
): Promise<void> {
  try {
    authorizeFileRequest(ctx.state, req, query, "write");
    const user = await requestUser(ctx.state, req, query.get("username"));
    const metadata = metadataFromHeaders(req.rawHeaders);
    const target: UploadTarget = { user, path: query.get("path") || undefined, metadata };
    const body = decodedBody(req);
    const contentType = headerValue(req.headers, "content-type") ?? "";
    const entries = /^multipart\/form-data/i.test(contentType)
      ? await uploadMultipart(req, body, target)
      : await uploadRaw(body, target);
    sendJson(res, 200, entries);
  } catch (err) {
    drain(req);
    throw err;
  }
}
