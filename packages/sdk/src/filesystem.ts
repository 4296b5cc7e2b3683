import type { EntryInfo, EnvdClient, EnvdComponents, FilesystemEvent } from "@x/envd-client";
import { unwrap } from "./config.js";
import { found, fromConnectError, fromUnknown, InvalidArgumentError, SandboxError } from "./errors.js";

/** What `files.write` accepts as a file's content. */
export type FileData = string | ArrayBuffer | Uint8Array | Blob;

/** One file for `files.write([...])`. */
export interface WriteEntry {
  path: string;
  data: FileData;
}

/** What envd answers for each written file. */
export type WriteInfo = EnvdComponents["schemas"]["EntryInfo"];

export interface FilesystemRequestOptions {
  /** User whose home relative paths resolve against and who owns written files. */
  user?: string;
  /** Abort the call after this long. */
  requestTimeoutMs?: number;
}

export interface WatchOptions {
  recursive?: boolean;
  /** Called when the watch ends, with the error if it ended by one. */
  onExit?: (err?: SandboxError) => void;
}

/** A running `watchDir`; `stop()` ends it. */
export interface WatchHandle {
  stop(): Promise<void>;
}

/** Parts of a chunked upload are 16 MiB unless told otherwise. */
const DEFAULT_CHUNK_BYTES = 16 * 1024 * 1024;

export interface ChunkedWriteOptions extends FilesystemRequestOptions {
  /** Size of each uploaded part in bytes (default 16 MiB). */
  chunkSizeBytes?: number;
  /** Called after each part is uploaded with the bytes sent so far. */
  onProgress?: (bytesSent: number) => void;
}

function toBlob(data: FileData): Blob {
  return data instanceof Blob ? data : new Blob([data as BlobPart]);
}

function signal(opts: FilesystemRequestOptions): AbortSignal | undefined {
  return opts.requestTimeoutMs ? AbortSignal.timeout(opts.requestTimeoutMs) : undefined;
}

/** Files in a sandbox: bytes over envd's `/files` route, everything else over Connect. */
export class Filesystem {
  /** @internal */
  constructor(private readonly envd: EnvdClient) {}

  read(path: string, opts?: FilesystemRequestOptions & { format?: "text" }): Promise<string>;
  read(path: string, opts: FilesystemRequestOptions & { format: "bytes" }): Promise<Uint8Array>;
  read(path: string, opts: FilesystemRequestOptions & { format: "blob" }): Promise<Blob>;
  read(
    path: string,
    opts: FilesystemRequestOptions & { format: "stream" },
  ): Promise<ReadableStream<Uint8Array>>;
  async read(
    path: string,
    opts: FilesystemRequestOptions & { format?: "text" | "bytes" | "blob" | "stream" } = {},
  ): Promise<unknown> {
    const format = opts.format ?? "text";
    const parseAs = format === "bytes" ? "arrayBuffer" : format;
    const data = await unwrap(
      `Reading ${path}`,
      this.envd.http.GET("/files", {
        params: { query: { path, username: opts.user } },
        parseAs,
        signal: signal(opts),
      }),
    );
    // An empty file comes back with no body at all.
    if (format === "text") return (data as string | undefined) ?? "";
    if (format === "bytes") return new Uint8Array((data as ArrayBuffer | undefined) ?? new ArrayBuffer(0));
    if (format === "blob") return (data as Blob | undefined) ?? new Blob([]);
    return (data as ReadableStream<Uint8Array> | undefined) ?? new Blob([]).stream();
  }

  /** Writes one file (creating parent directories), or several in one multipart request. */
  write(path: string, data: FileData, opts?: FilesystemRequestOptions): Promise<WriteInfo>;
  write(files: WriteEntry[], opts?: FilesystemRequestOptions): Promise<WriteInfo[]>;
  async write(
    pathOrFiles: string | WriteEntry[],
    dataOrOpts?: FileData | FilesystemRequestOptions,
    maybeOpts?: FilesystemRequestOptions,
  ): Promise<WriteInfo | WriteInfo[]> {
    const single = typeof pathOrFiles === "string";
    const files = single ? [{ path: pathOrFiles, data: dataOrOpts as FileData }] : pathOrFiles;
    const opts = (single ? maybeOpts : (dataOrOpts as FilesystemRequestOptions | undefined)) ?? {};
    if (files.length === 0) return [];
    const form = new FormData();
    for (const file of files) form.append("file", toBlob(file.data), file.path);
    const written = await unwrap(
      single ? `Writing ${pathOrFiles}` : `Writing ${files.length} files`,
      this.envd.http.POST("/files", {
        params: { query: { path: single ? pathOrFiles : undefined, username: opts.user } },
        body: form as never,
        bodySerializer: (body: unknown) => body as FormData,
        signal: signal(opts),
      }),
    );
    return single ? (written[0] as WriteInfo) : written;
  }

  /**
   * Concatenates `sourcePaths`, in order, into `destination` (overwritten if it exists) inside
   * the sandbox, then deletes the sources. Zero-copy where the filesystem allows.
   */
  compose(
    sourcePaths: string[],
    destination: string,
    opts: FilesystemRequestOptions = {},
  ): Promise<WriteInfo> {
    return unwrap(
      `Composing ${sourcePaths.length} files into ${destination}`,
      this.envd.http.POST("/files/compose", {
        body: { source_paths: sourcePaths, destination, username: opts.user },
        signal: signal(opts),
      }),
    );
  }

  /**
   * Writes a large file in parts: each part is uploaded on its own request into a scratch
   * directory beside `path`, then `compose` joins them into `path`. The scratch directory is
   * removed whether or not the upload succeeds.
   */
  async writeChunked(
    path: string,
    data: FileData | ReadableStream<Uint8Array>,
    opts: ChunkedWriteOptions = {},
  ): Promise<WriteInfo> {
    const size = opts.chunkSizeBytes ?? DEFAULT_CHUNK_BYTES;
    if (!Number.isInteger(size) || size <= 0)
      throw new InvalidArgumentError(`chunkSizeBytes must be a positive integer, got ${size}`);
    const slash = path.lastIndexOf("/");
    const scratch = `${slash >= 0 ? path.slice(0, slash + 1) : ""}.${path.slice(slash + 1)}.parts-${Date.now().toString(36)}${Math.random().toString(36).slice(2, 8)}`;
    const parts: string[] = [];
    let sent = 0;
    try {
      for await (const chunk of chunks(data, size)) {
        const part = `${scratch}/${String(parts.length).padStart(6, "0")}`;
        await this.write(part, chunk, opts);
        parts.push(part);
        sent += chunk.size;
        opts.onProgress?.(sent);
      }
      if (parts.length === 0) return await this.write(path, "", opts);
      return await this.compose(parts, path, opts);
    } finally {
      await this.remove(scratch).catch(() => undefined);
    }
  }

  /** Entries of a directory; `depth` > 1 also lists subdirectories. */
  async list(path: string, opts: { depth?: number } = {}): Promise<EntryInfo[]> {
    try {
      const res = await this.envd.filesystem.listDir({ path, depth: opts.depth ?? 1 });
      return res.entries;
    } catch (err) {
      throw fromConnectError(err, `Listing ${path}`);
    }
  }

  /** Type, size, mode, owner and modification time of a path. */
  async getInfo(path: string): Promise<EntryInfo> {
    try {
      const res = await this.envd.filesystem.stat({ path });
      if (!res.entry) throw new SandboxError(`Stat of ${path} returned no entry`);
      return res.entry;
    } catch (err) {
      throw fromConnectError(err, `Getting info of ${path}`);
    }
  }

  /** Whether a path exists. */
  exists(path: string): Promise<boolean> {
    return found(this.getInfo(path));
  }

  /** Creates a directory and its parents; `false` when it already existed. */
  async makeDir(path: string): Promise<boolean> {
    try {
      await this.envd.filesystem.makeDir({ path });
      return true;
    } catch (err) {
      const mapped = fromConnectError(err, `Making directory ${path}`);
      if (mapped.code === "conflict") return false;
      throw mapped;
    }
  }

  /** Moves or renames a file or directory. */
  async rename(oldPath: string, newPath: string): Promise<EntryInfo> {
    try {
      const res = await this.envd.filesystem.move({ source: oldPath, destination: newPath });
      if (!res.entry) throw new SandboxError(`Move of ${oldPath} returned no entry`);
      return res.entry;
    } catch (err) {
      throw fromConnectError(err, `Renaming ${oldPath} to ${newPath}`);
    }
  }

  /** Removes a file or a directory with its contents; a path that is not there is no error. */
  async remove(path: string): Promise<void> {
    try {
      await this.envd.filesystem.remove({ path });
    } catch (err) {
      throw fromConnectError(err, `Removing ${path}`);
    }
  }

  /** Calls `onEvent` for each change under `path` until `stop()`; resolves once the watch is live. */
  async watchDir(
    path: string,
    onEvent: (event: FilesystemEvent) => void | Promise<void>,
    opts: WatchOptions = {},
  ): Promise<WatchHandle> {
    const controller = new AbortController();
    const stream = this.envd.filesystem.watchDir(
      { path, recursive: opts.recursive ?? false },
      { signal: controller.signal },
    );
    const iterator = stream[Symbol.asyncIterator]();
    try {
      const first = await iterator.next();
      if (first.done || first.value.event.case !== "start")
        throw new SandboxError(`Watching ${path}: envd did not confirm the watch`);
    } catch (err) {
      controller.abort();
      throw fromConnectError(err, `Watching ${path}`);
    }
    const done = (async () => {
      try {
        for (;;) {
          const next = await iterator.next();
          if (next.done) break;
          if (next.value.event.case === "filesystem") await onEvent(next.value.event.value);
        }
        opts.onExit?.();
      } catch (err) {
        if (controller.signal.aborted) opts.onExit?.();
        else opts.onExit?.(err instanceof SandboxError ? err : fromUnknown(err, `Watching ${path}`));
      }
    })();
    return {
      stop: async () => {
        controller.abort();
        await done;
      },
    };
  }
}

/** The data in blobs of `size` bytes (the last may be shorter). */
async function* chunks(data: FileData | ReadableStream<Uint8Array>, size: number): AsyncGenerator<Blob> {
  if (!(data instanceof ReadableStream)) {
    const blob = toBlob(data);
    for (let at = 0; at < blob.size; at += size) yield blob.slice(at, at + size);
    return;
  }
  let pending: Uint8Array[] = [];
  let pendingBytes = 0;
  const reader = data.getReader();
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      let rest = value;
      while (pendingBytes + rest.length >= size) {
        const take = size - pendingBytes;
        pending.push(rest.subarray(0, take));
        yield new Blob(pending as BlobPart[]);
        pending = [];
        pendingBytes = 0;
        rest = rest.subarray(take);
      }
      if (rest.length > 0) {
        pending.push(rest.slice());
        pendingBytes += rest.length;
      }
    }
    if (pendingBytes > 0) yield new Blob(pending as BlobPart[]);
  } finally {
    reader.releaseLock();
  }
}
