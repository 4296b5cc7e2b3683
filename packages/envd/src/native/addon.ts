import path from "node:path";

/** The raw surface of `native/envd_native.c`. */
export interface NativeAddon {
  inotifyInit(onEvents: (events: RawInotifyEvent[]) => void): InotifyHandle;
  inotifyAddWatch(handle: InotifyHandle, path: string, mask: number): number;
  inotifyRmWatch(handle: InotifyHandle, wd: number): void;
  inotifyClose(handle: InotifyHandle): void;
  getxattr(path: string, name: string): Buffer | undefined;
  setxattr(path: string, name: string, value: Buffer): void;
  listxattr(path: string): string[];
  removexattr(path: string, name: string): void;
  /** Per name, 7 numbers: mode (0: gone), uid, gid, size, mtime s and ns, xattr state. */
  statEntries(dir: string, names: readonly string[]): Float64Array;
  /** This process's RLIMIT_NPROC; its children inherit it. */
  setProcessLimit(soft: number, hard: number): void;
}

/** Opaque: owns one inotify fd and its libuv poll handle. */
export type InotifyHandle = { readonly __brand: "InotifyHandle" };

export interface RawInotifyEvent {
  wd: number;
  mask: number;
  cookie: number;
  name: string;
}

const loaded = new Map<string, unknown>();

/**
 * Loads one of envd's addons lazily: next to the bundle (`dist/bundle/native/`, copied by
 * scripts/bundle.mjs) or from node-gyp's output when running from the sources.
 */
export function loadAddon<T>(file: string): T {
  const cached = loaded.get(file);
  if (cached) return cached as T;
  const candidates = [
    path.join(__dirname, "native", file),
    path.join(__dirname, "..", "..", "native", "build", "Release", file),
  ];
  let lastError: unknown;
  for (const candidate of candidates) {
    try {
      const addon = require(candidate) as T;
      loaded.set(file, addon);
      return addon;
    } catch (err) {
      lastError = err;
    }
  }
  throw new Error(
    `envd addon ${file} not found (tried ${candidates.join(", ")}); run \`pnpm install\` in packages/envd`,
    {
      cause: lastError,
    },
  );
}

/** inotify and extended attributes (`native/envd_native.c`). */
export function nativeAddon(): NativeAddon {
  return loadAddon<NativeAddon>("envd_native.node");
}
