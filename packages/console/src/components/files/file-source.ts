import type { FileEntry } from "./file-entry.js";

/** Where a file browser's files are: a sandbox (through envd) or a volume (its content API). */
export interface FileSource {
  /** Names the source in query keys. */
  key: string;
  /** Where browsing starts. */
  home: string;
  list(path: string, signal?: AbortSignal): Promise<FileEntry[]>;
  read(path: string): Promise<Blob>;
  write(path: string, data: Blob): Promise<void>;
  makeDir(path: string): Promise<void>;
  remove(path: string): Promise<void>;
  /** Live changes of a directory, where the source can tell: resolves once watching. */
  watch?(
    path: string,
    handlers: { onChange(what: string): void; onEnd(error?: unknown): void },
    signal: AbortSignal,
  ): Promise<void>;
  /** A message for an error of this source. */
  describeError(err: unknown): string;
}
