import os from "node:os";
import path from "node:path";

/** The surface of `native/copy_range.c` (its own addon, `envd_copy_range.node`). */
interface CopyRangeAddon {
  copyFileRange(inFd: number, outFd: number): Promise<number>;
}

const ADDON_FILE = "envd_copy_range.node";

let addon: CopyRangeAddon | undefined;

/** Loaded like the main addon: next to the bundle, or from node-gyp's output. */
function copyRangeAddon(): CopyRangeAddon {
  if (addon) return addon;
  const candidates = [
    path.join(__dirname, "native", ADDON_FILE),
    path.join(__dirname, "..", "..", "native", "build", "Release", ADDON_FILE),
  ];
  let lastError: unknown;
  for (const file of candidates) {
    try {
      addon = require(file) as CopyRangeAddon;
      return addon;
    } catch (err) {
      lastError = err;
    }
  }
  throw new Error(
    `envd copy_file_range addon not found (tried ${candidates.join(", ")}); run node-gyp rebuild --directory native`,
    {
      cause: lastError,
    },
  );
}

const errnoNames = new Map(Object.entries(os.constants.errno).map(([name, value]) => [value, name]));

/**
 * Appends everything from `inFd`'s offset to its end at `outFd`'s offset, inside the kernel
 * (copy_file_range, or sendfile across filesystems) on a worker thread. Rejects with a
 * Node-style error whose `code` is the errno name (ENOSPC, ...).
 */
export async function appendFileRange(inFd: number, outFd: number): Promise<number> {
  try {
    return await copyRangeAddon().copyFileRange(inFd, outFd);
  } catch (err) {
    const errno = (err as { errno?: unknown } | null)?.errno;
    if (typeof errno === "number") Object.assign(err as object, { code: errnoNames.get(errno) });
    throw err;
  }
}
