import { randomBytes } from "node:crypto";
import {
  chownSync,
  closeSync,
  fchownSync,
  mkdirSync,
  openSync,
  realpathSync,
  type Stats,
  statSync,
  unlinkSync,
  writeSync,
} from "node:fs";
import { type FileHandle, open } from "node:fs/promises";
import path from "node:path";
import { Readable } from "node:stream";
import { errnoOf } from "../errors.js";
import { writeMetadata } from "../filesystem/metadata.js";
import { realpath, rename, stat, unlink } from "../sync-fs.js";
import type { User } from "../users.js";
import { isGzipError } from "./body.js";
import { fsHttpError, HttpError } from "./respond.js";

/** Creates `dir` and missing parents; the ones created here are given to `user`. */
export function ensureDir(dir: string, user: User): void {
  let first: string | undefined;
  try {
    first = mkdirSync(dir, { recursive: true });
  } catch (err) {
    throw mkdirFailure(err, dir);
  }
  for (const d of madeDirs(dir, first)) chownSync(d, user.uid, user.gid);
}

/** The answer to a failed `mkdir -p dir`. */
function mkdirFailure(err: unknown, dir: string): Error {
  const errno = errnoOf(err);
  if (errno === "EEXIST" || errno === "ENOTDIR") {
    return new HttpError(400, `cannot create directory '${dir}': a path component is not a directory`, {
      cause: err,
    });
  }
  return fsHttpError(err, "create directory", dir);
}

/** The directories `mkdir -p dir` made, `dir` up to `first` (the first it made; none when undefined). */
function madeDirs(dir: string, first: string | undefined): string[] {
  const made: string[] = [];
  if (!first) return made;
  for (let d = dir; ; d = path.dirname(d)) {
    made.push(d);
    if (d === first || d === path.dirname(d)) return made;
  }
}

/** A hidden sibling of `file` (same directory, so renaming onto `file` is atomic). */
export function tempSibling(file: string, purpose: string): string {
  return path.join(path.dirname(file), `.envd-${purpose}-${randomBytes(6).toString("hex")}`);
}

/** Stats of an existing destination, undefined when there is none; a directory is refused. */
export async function existingFile(file: string): Promise<Stats | undefined> {
  let st: Stats;
  try {
    st = await stat(file);
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw fsHttpError(err, "stat", file);
  }
  if (st.isDirectory()) throw new HttpError(400, `path '${file}' is a directory`);
  return st;
}

async function writeAll(handle: FileHandle, chunk: Buffer): Promise<void> {
  for (let offset = 0; offset < chunk.length; ) {
    const { bytesWritten } = await handle.write(chunk, offset);
    offset += bytesWritten;
  }
}

/** A failure of the incoming body (bad gzip, client gone) rather than of the disk. */
class SourceError extends Error {}

/**
 * Bytes gathered from the body before one write: a socket hands over 64 KiB at a time, and each
 * write is a trip through libuv's thread pool, which costs ~0.4 ms inside gVisor (a 64 MiB upload
 * spent more time in those trips than in writing).
 */
const WRITE_BATCH_BYTES = 1 << 20;

async function copyStream(source: Readable, handle: FileHandle): Promise<number> {
  let size = 0;
  let batch: Buffer[] = [];
  let batched = 0;
  const flush = async () => {
    if (batched === 0) return;
    await writeAll(handle, batch.length === 1 ? batch[0]! : Buffer.concat(batch, batched));
    size += batched;
    batch = [];
    batched = 0;
  };
  // Leave the source intact on failure, for the caller to drain: busboy stalls if one of
  // its part streams is destroyed.
  const chunks = source.iterator({ destroyOnReturn: false }) as AsyncIterator<Buffer>;
  try {
    for (;;) {
      let next: IteratorResult<Buffer>;
      try {
        next = await chunks.next();
      } catch (err) {
        throw new SourceError("request body failed", { cause: err });
      }
      if (next.done) {
        await flush();
        return size;
      }
      batch.push(next.value);
      batched += next.value.length;
      if (batched >= WRITE_BATCH_BYTES) await flush();
    }
  } finally {
    // Detaches the iterator's 'readable' listener, without which resume() cannot drain.
    await chunks.return?.();
  }
}

function writeError(err: unknown, file: string): Error {
  if (!(err instanceof SourceError)) return fsHttpError(err, "write", file);
  const cause = err.cause;
  if (isGzipError(cause))
    return new HttpError(400, `cannot decompress the body for '${file}': invalid gzip data`, { cause });
  return cause instanceof Error ? cause : err;
}

/**
 * Streams `source` into `file` with `metadata` as its user metadata, the way open(2) with
 * O_CREAT|O_TRUNC would (through symlinks, into devices), except that an existing regular
 * file is replaced by renaming a fully written sibling over it: a failed upload never leaves
 * it truncated. Files created or replaced here belong to `user`; a replacement keeps the
 * old permission bits. A new file that fails midway is removed.
 */
export async function writeFileFromStream(
  file: string,
  source: Readable,
  user: User,
  metadata: Record<string, string>,
): Promise<void> {
  ensureDir(path.dirname(file), user);
  const existing = await existingFile(file);
  if (existing?.isFile()) {
    await replaceFile(await realpath(file), existing, source, user, metadata);
    return;
  }
  let handle: FileHandle;
  try {
    handle = await open(file, "w");
  } catch (err) {
    throw fsHttpError(err, "open", file);
  }
  // What to remove on failure: the file this call created (behind a dangling symlink, too).
  const created = existing ? undefined : await realpath(file).catch(() => file);
  try {
    if (created) await handle.chown(user.uid, user.gid);
    await copyStream(source, handle);
    if (Object.keys(metadata).length > 0) await writeMetadata(file, metadata);
  } catch (err) {
    if (created) await unlink(created).catch(() => undefined);
    throw writeError(err, file);
  } finally {
    await handle.close();
  }
}

async function replaceFile(
  file: string,
  existing: Stats,
  source: Readable,
  user: User,
  metadata: Record<string, string>,
): Promise<void> {
  const staging = tempSibling(file, "upload");
  let handle: FileHandle;
  try {
    handle = await open(staging, "wx");
  } catch (err) {
    throw fsHttpError(err, "write", file);
  }
  try {
    await handle.chown(user.uid, user.gid);
    // After chown, which clears set-id bits.
    await handle.chmod(existing.mode & 0o7777);
    const size = await copyStream(source, handle);
    if (Object.keys(metadata).length > 0) await writeMetadata(staging, metadata);
    await rename(staging, file);
    // Watchers of the directory expect a write event for the file itself, as an in-place
    // overwrite gives; the rename alone reports a move. Truncating to the same size
    // through our descriptor raises IN_MODIFY under the new name without touching the data.
    await handle.truncate(size).catch(() => undefined);
  } catch (err) {
    await unlink(staging).catch(() => undefined);
    throw writeError(err, file);
  } finally {
    await handle.close();
  }
}

/** Parts of an upload up to this size are gathered whole and written by writeSmallFile. */
export const SMALL_FILE_MAX = 256 << 10;

/**
 * writeFileFromStream for a file whose bytes are all here, with synchronous calls: a new file
 * costs mkdir (once per directory: `knownDirs`), an exclusive open, fchown, write and close, where the
 * streaming path waits for the thread pool at each step, so a multipart body of a thousand
 * small files took a thread-pool round trip per call per file. Same semantics; whatever is
 * already at the path goes through writeFileFromStream (an existing file is replaced by its
 * atomic rename).
 */
export async function writeSmallFile(
  file: string,
  data: Buffer,
  user: User,
  metadata: Record<string, string>,
  knownDirs: Set<string>,
): Promise<void> {
  const dir = path.dirname(file);
  if (!knownDirs.has(dir)) {
    ensureDir(dir, user);
    knownDirs.add(dir);
  }
  // A new file, the common case, is created exclusively: no stat before it (under gVisor each
  // system call is a round trip through the sentry, ~60 µs).
  let fd: number | undefined;
  try {
    fd = openSync(file, "wx");
  } catch (err) {
    const errno = errnoOf(err);
    // the directory went away since this upload made it: make it again, once
    if (errno === "ENOENT" && knownDirs.delete(dir))
      return writeSmallFile(file, data, user, metadata, knownDirs);
    if (errno !== "EEXIST") throw fsHttpError(err, "open", file);
  }
  if (fd === undefined) {
    // something is there already, or a symlink (dangling, maybe) is
    let existing: Stats | undefined;
    try {
      existing = statSync(file, { throwIfNoEntry: false });
    } catch (err) {
      throw fsHttpError(err, "stat", file);
    }
    if (existing?.isDirectory()) throw new HttpError(400, `path '${file}' is a directory`);
    // a file to replace atomically, a FIFO or device whose open may block: the streaming
    // path, off the event loop
    if (existing) return writeFileFromStream(file, Readable.from([data]), user, metadata);
    try {
      fd = openSync(file, "w"); // through a dangling symlink, as open(2) with O_CREAT does
    } catch (err) {
      throw fsHttpError(err, "open", file);
    }
  }
  try {
    fchownSync(fd, user.uid, user.gid);
    for (let offset = 0; offset < data.length; ) offset += writeSync(fd, data, offset);
    if (Object.keys(metadata).length > 0) await writeMetadata(file, metadata);
  } catch (err) {
    // what this call created (behind a dangling symlink, too) goes again
    try {
      unlinkSync(realpathSync(file));
    } catch {
      // already gone
    }
    throw fsHttpError(err, "write", file);
  } finally {
    closeSync(fd);
  }
}
