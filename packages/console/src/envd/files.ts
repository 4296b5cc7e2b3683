import { timestampDate } from "@bufbuild/protobuf/wkt";
import { type EntryInfo, type EnvdClient, EventType, type FilesystemEvent, FileType } from "@x/envd-client";
import { unwrap } from "../api/errors.js";
import { byKindAndName, type FileEntry } from "../components/files/file-entry.js";

const TYPES: Record<FileType, FileEntry["type"]> = {
  [FileType.UNSPECIFIED]: "unknown",
  [FileType.FILE]: "file",
  [FileType.DIRECTORY]: "directory",
  [FileType.SYMLINK]: "symlink",
};

function toEntry(e: EntryInfo): FileEntry {
  return {
    name: e.name,
    path: e.path,
    type: TYPES[e.type] ?? "unknown",
    size: Number(e.size),
    permissions: e.permissions,
    owner: e.owner,
    group: e.group,
    modified: e.modifiedTime ? timestampDate(e.modifiedTime) : undefined,
    symlinkTarget: e.symlinkTarget,
  };
}

export async function listDir(envd: EnvdClient, path: string, signal?: AbortSignal): Promise<FileEntry[]> {
  const res = await envd.filesystem.listDir({ path, depth: 1 }, { signal });
  return res.entries.map(toEntry).sort(byKindAndName);
}

export async function makeDir(envd: EnvdClient, path: string): Promise<void> {
  await envd.filesystem.makeDir({ path });
}

export async function removePath(envd: EnvdClient, path: string): Promise<void> {
  await envd.filesystem.remove({ path });
}

export async function movePath(envd: EnvdClient, source: string, destination: string): Promise<void> {
  await envd.filesystem.move({ source, destination });
}

const EVENT_NAMES: Record<EventType, string> = {
  [EventType.UNSPECIFIED]: "change",
  [EventType.CREATE]: "create",
  [EventType.WRITE]: "write",
  [EventType.REMOVE]: "remove",
  [EventType.RENAME]: "rename",
  [EventType.CHMOD]: "chmod",
};

export function eventName(e: FilesystemEvent): string {
  return EVENT_NAMES[e.type] ?? "change";
}

/**
 * Watches a directory (not its subdirectories) until `signal` aborts: resolves once envd
 * confirms the watch, then calls `onEvent` per change and `onEnd` when the stream ends.
 */
export async function watchDir(
  envd: EnvdClient,
  path: string,
  handlers: { onEvent(e: FilesystemEvent): void; onEnd(error?: unknown): void },
  signal: AbortSignal,
): Promise<void> {
  const stream = envd.filesystem.watchDir({ path, recursive: false }, { signal });
  const iterator = stream[Symbol.asyncIterator]();
  const first = await iterator.next();
  if (first.done || first.value.event.case !== "start")
    throw new Error(`envd did not confirm the watch of ${path}`);
  void (async () => {
    try {
      for (;;) {
        const next = await iterator.next();
        if (next.done) break;
        if (next.value.event.case === "filesystem") handlers.onEvent(next.value.event.value);
      }
      if (!signal.aborted) handlers.onEnd();
    } catch (err) {
      if (!signal.aborted) handlers.onEnd(err);
    }
  })();
}

/** Writes one file (creating its parents) through envd's multipart `POST /files`. */
export async function writeFile(envd: EnvdClient, path: string, data: Blob): Promise<void> {
  const form = new FormData();
  form.append("file", data, path.slice(path.lastIndexOf("/") + 1) || "file");
  await unwrap(
    envd.http.POST("/files", {
      params: { query: { path } },
      body: form as never,
      bodySerializer: (body: unknown) => body as FormData,
    }),
  );
}

/** A file's bytes through envd's `GET /files`. */
export async function readFile(envd: EnvdClient, path: string, signal?: AbortSignal): Promise<Blob> {
  const data = await unwrap(
    envd.http.GET("/files", { params: { query: { path } }, parseAs: "blob", signal }),
  );
  // an empty file comes back with no body at all
  return (data as Blob | undefined) ?? new Blob([]);
}
