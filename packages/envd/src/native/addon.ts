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
}

/** Opaque: owns one inotify fd and its libuv poll handle. */
export type InotifyHandle = { readonly __brand: "InotifyHandle" };

export interface RawInotifyEvent {
  wd: number;
  mask: number;
  cookie: number;
  name: string;
}

const ADDON_FILE = "envd_native.node";

let addon: NativeAddon | undefined;

/**
 * Loads the addon lazily: next to the bundle (`dist/bundle/native/`, copied by
 * scripts/bundle.mjs) or from node-gyp's output when running from `src/native` or `dist/native`.
 */
export function nativeAddon(): NativeAddon {
  if (addon) return addon;
  const candidates = [
    path.join(__dirname, "native", ADDON_FILE),
    path.join(__dirname, "..", "..", "native", "build", "Release", ADDON_FILE),
  ];
  let lastError: unknown;
  for (const file of candidates) {
    try {
      addon = require(file) as NativeAddon;
      return addon;
    } catch (err) {
      lastError = err;
    }
  }
  throw new Error(
    `envd native addon not found (tried ${candidates.join(", ")}); run node-gyp rebuild --directory native`,
    {
      cause: lastError,
    },
  );
}
