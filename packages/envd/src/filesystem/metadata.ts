import { lstatSync } from "node:fs";
import { errnoOf } from "../errors.js";
import { XATTRS, type XattrState } from "../native/stat-entries.js";
import { getXattr, listXattrs, removeXattr, setXattr } from "../native/xattr.js";
import { lstat } from "../sync-fs.js";

/**
 * User metadata lives in extended attributes `user.e2b.<key>`, the namespace e2b's envd uses:
 * it follows the file on rename, and tools like setfattr can set it too.
 */
const PREFIX = "user.e2b.";

/** Errnos meaning "this filesystem or entry cannot carry user xattrs" rather than a failure. */
const UNSUPPORTED = new Set(["ENOTSUP", "EOPNOTSUPP", "EPERM"]);

/** Errnos of a filesystem without user xattrs at all (gVisor's gofer mounts in Debian 12's runsc). */
const NO_XATTRS = new Set(["ENOTSUP", "EOPNOTSUPP"]);

/**
 * Where the filesystem has no user xattrs, envd keeps the metadata itself, per inode (so it
 * follows the file on rename, and an overwrite, which writes a new inode, drops it). An entry
 * only counts while the inode has the size (and birth time, where known) it had when written,
 * so a reused inode does not show another file's metadata. It lives as long as envd does, and
 * tools such as setfattr cannot reach it.
 */
interface Kept {
  metadata: Record<string, string>;
  size: bigint;
  birthtimeNs: bigint;
}
const kept = new Map<string, Kept>();
const KEPT_MAX = 100_000;

async function inodeOf(path: string) {
  const st = await lstat(path, { bigint: true });
  return { key: `${st.dev}:${st.ino}`, size: st.size, birthtimeNs: st.birthtimeNs };
}

async function keep(path: string, metadata: Record<string, string>): Promise<void> {
  const { key, size, birthtimeNs } = await inodeOf(path);
  kept.delete(key);
  if (Object.keys(metadata).length === 0) return;
  if (kept.size >= KEPT_MAX) kept.delete(kept.keys().next().value as string);
  kept.set(key, { metadata: { ...metadata }, size, birthtimeNs });
}

async function keptFor(path: string): Promise<Record<string, string>> {
  if (kept.size === 0) return {};
  return keptForInode(await inodeOf(path));
}

function keptForInode({ key, size, birthtimeNs }: { key: string; size: bigint; birthtimeNs: bigint }) {
  const entry = kept.get(key);
  if (!entry) return {};
  if (entry.size !== size || entry.birthtimeNs !== birthtimeNs) {
    kept.delete(key);
    return {};
  }
  return { ...entry.metadata };
}

/**
 * Replaces the user metadata of `path` with `metadata` (keys not given are removed; `{}`
 * clears it). Does not follow a final symlink.
 */
export async function writeMetadata(path: string, metadata: Record<string, string>): Promise<void> {
  try {
    for (const name of listXattrs(path)) {
      if (name.startsWith(PREFIX) && !Object.hasOwn(metadata, name.slice(PREFIX.length)))
        removeXattr(path, name);
    }
    for (const [key, value] of Object.entries(metadata)) setXattr(path, PREFIX + key, value);
    // the xattrs now say it all (an empty `metadata` sets none, even where xattrs are missing)
    if (kept.size > 0) await keep(path, {});
  } catch (err) {
    if (!NO_XATTRS.has(errnoOf(err) ?? "")) throw err;
    await keep(path, metadata);
  }
}

/** The user metadata of `path`; empty where the filesystem has no user xattrs. */
export async function readMetadata(path: string): Promise<Record<string, string>> {
  const metadata = xattrMetadata(path);
  if (metadata !== NO_XATTR_SUPPORT && Object.keys(metadata).length > 0) return metadata;
  // gVisor lists (no) xattrs but refuses to set them: what envd kept instead.
  return metadata === NO_XATTR_SUPPORT || kept.size > 0 ? keptFor(path) : metadata;
}

/**
 * readMetadata for an entry of a directory listing, given what statEntries saw of its xattrs:
 * synchronous (the l*xattr calls return in microseconds), and only an entry with xattrs of
 * envd's own is asked for them. Where envd keeps metadata itself (a filesystem that cannot set
 * user xattrs: gVisor's gofer mounts), the entry's inode is looked up there.
 */
export function listedEntryMetadata(path: string, xattrs: XattrState): Record<string, string> {
  if (xattrs === XATTRS.ours) {
    let metadata: Record<string, string> = {};
    try {
      metadata = xattrMetadata(path);
    } catch {
      // unreadable meanwhile: no metadata, as a failed listxattr always gave
    }
    if (Object.keys(metadata).length > 0) return metadata;
  }
  if (kept.size === 0) return {};
  const st = lstatSync(path, { bigint: true, throwIfNoEntry: false });
  if (!st) return {};
  return keptForInode({ key: `${st.dev}:${st.ino}`, size: st.size, birthtimeNs: st.birthtimeNs });
}

/** Returned by xattrMetadata where the filesystem has no user xattrs at all. */
const NO_XATTR_SUPPORT: Record<string, string> = Object.freeze({}) as Record<string, string>;

function xattrMetadata(path: string): Record<string, string> {
  const metadata: Record<string, string> = {};
  let names: string[];
  try {
    names = listXattrs(path);
  } catch (err) {
    const errno = errnoOf(err) ?? "";
    if (NO_XATTRS.has(errno)) return NO_XATTR_SUPPORT;
    if (UNSUPPORTED.has(errno)) return metadata;
    throw err;
  }
  for (const name of names) {
    if (!name.startsWith(PREFIX)) continue;
    const value = getXattr(path, name);
    if (value !== undefined) metadata[name.slice(PREFIX.length)] = value.toString("utf8");
  }
  return metadata;
}
