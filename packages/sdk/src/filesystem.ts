import type { EntryInfo, EnvdClient, EnvdComponents, FilesystemEvent } from "@x/envd-client";
import { unwrap } from "./config.js";
import { fromConnectError, fromUnknown, NotFoundError, SandboxError } from "./errors.js";

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
  async exists(path: string): Promise<boolean> {
    try {
      await this.getInfo(path);
      return true;
    } catch (err) {
      if (err instanceof NotFoundError) return false;
      throw err;
    }
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

  /** Removes a file or a directory with its contents. */
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
