import { errnoOf } from "../errors.js";
import { getXattr, listXattrs, removeXattr, setXattr } from "../native/xattr.js";

/**
 * User metadata lives in extended attributes `user.e2b.<key>`, the namespace e2b's envd uses:
 * it follows the file on rename, and tools like setfattr can set it too.
 */
const PREFIX = "user.e2b.";

/** Errnos meaning "this filesystem or entry cannot carry user xattrs" rather than a failure. */
const UNSUPPORTED = new Set(["ENOTSUP", "EOPNOTSUPP", "EPERM"]);

/**
 * Replaces the user metadata of `path` with `metadata` (keys not given are removed; `{}`
 * clears it). Does not follow a final symlink.
 */
export async function writeMetadata(path: string, metadata: Record<string, string>): Promise<void> {
  for (const name of listXattrs(path)) {
    if (name.startsWith(PREFIX) && !Object.hasOwn(metadata, name.slice(PREFIX.length)))
      removeXattr(path, name);
  }
  for (const [key, value] of Object.entries(metadata)) setXattr(path, PREFIX + key, value);
}

/** The user metadata of `path`; empty where the filesystem has no user xattrs. */
export async function readMetadata(path: string): Promise<Record<string, string>> {
  const metadata: Record<string, string> = {};
  let names: string[];
  try {
    names = listXattrs(path);
  } catch (err) {
    if (UNSUPPORTED.has(errnoOf(err) ?? "")) return metadata;
    throw err;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const value = getXattr(path, name);
    if (value !== undefined) metadata[name.slice(PREFIX.length)] = value.toString("utf8");
  }
  return metadata;
}
