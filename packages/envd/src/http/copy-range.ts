import os from "node:os";
import { loadAddon } from "../native/addon.js";

/** The surface of `native/copy_range.c` (its own addon, `envd_copy_range.node`). */
interface CopyRangeAddon {
  copyFileRange(inFd: number, outFd: number): Promise<number>;
}

function copyRangeAddon(): CopyRangeAddon {
  return loadAddon<CopyRangeAddon>("envd_copy_range.node");
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
