import { constants } from "node:fs";
import {
  chmod,
  chown,
  copyFile,
  lchown,
  lstat,
  mkdir,
  readdir,
  readlink,
  symlink,
  unlink,
  utimes,
} from "node:fs/promises";
import path from "node:path";
import { command } from "../lib/command.js";
import type { RootfsView } from "./rootfs-view.js";

export interface CopyOptions {
  /** The client's archive of the step's files (tar, gzip-compressed or not). */
  archive: string;
  /** Scratch directory on the host for unpacking. */
  scratch: string;
  /** Source as the step names it (relative, may end in a glob). */
  src: string;
  /** Destination; relative ones start at the working directory (or the user's home). */
  dest: string;
  /** `user[:group]` owning the copied files. */
  owner: string;
  /** Permission bits for copied files; their own when absent. */
  mode?: number;
  workdir?: string;
  /** The step's user, for the home directory a relative destination starts from. */
  user: string;
}

/**
 * The directory the client's archive holds a source under: the source up to its first glob
 * (the client expands globs itself and archives the matches with their relative paths).
 */
export function sourceRoot(src: string): string {
  const parts = src.split("/").filter((p) => p !== "" && p !== ".");
  const glob = parts.findIndex((p) => /[*?[{]/.test(p));
  return (glob < 0 ? parts : parts.slice(0, glob)).join("/");
}

type Ids = { uid: number; gid: number };

/**
 * A COPY step on the host: the archive is unpacked into scratch space and its files copied
 * through `view` (an overlay whose upper directory becomes the step's layer). Like the public
 * service: a file source lands at `dest` exactly (inside it when `dest` is a directory or ends
 * in '/'), a directory source's contents land in `dest`; everything copied is owned by `owner`.
 */
export async function copyFromArchive(view: RootfsView, o: CopyOptions): Promise<void> {
  const unpack = path.join(o.scratch, "unpack");
  await mkdir(unpack, { recursive: true, mode: 0o700 });
  // GNU tar strips leading '/' and '..' from member names and defers symlinks that could
  // redirect later members, so the archive cannot write outside `unpack`
  await command("tar", ["-x", "--no-same-owner", "-f", o.archive, "-C", unpack], { timeoutMs: 30 * 60_000 });
  const entry = path.join(unpack, sourceRoot(o.src));
  const info = await lstat(entry).catch(() => undefined);
  if (!info) throw new Error(`'${o.src}' is not among the uploaded files`);
  const ids = await view.owner(o.owner || o.user);
  const start = o.workdir ?? (await view.user(o.user))?.home ?? "/";
  let target = path.posix.resolve(start, o.dest);
  if (info.isDirectory()) {
    await copyDirectory(view, entry, target, ids, o.mode);
    return;
  }
  const existing = await lstat(view.host(await view.resolve(target))).catch(() => undefined);
  if (o.dest.endsWith("/") || existing?.isDirectory()) target = path.posix.join(target, path.basename(entry));
  await copyEntry(view, entry, target, ids, o.mode);
}

async function copyDirectory(
  view: RootfsView,
  source: string,
  dest: string,
  ids: Ids,
  mode: number | undefined,
): Promise<void> {
  const resolved = await view.resolve(dest);
  const host = view.host(resolved);
  const existing = await lstat(host).catch(() => undefined);
  if (!existing) {
    await view.mkdirs(path.posix.dirname(resolved));
    await mkdir(host, { mode: 0o755 });
    await chown(host, ids.uid, ids.gid);
    await chmod(host, (await lstat(source)).mode & 0o7777);
  } else if (!existing.isDirectory()) {
    throw new Error(`cannot copy a directory to ${dest}: it exists and is not a directory`);
  }
  for (const name of await readdir(source)) {
    await copyEntry(view, path.join(source, name), path.posix.join(resolved, name), ids, mode);
  }
}

async function copyEntry(
  view: RootfsView,
  source: string,
  dest: string,
  ids: Ids,
  mode: number | undefined,
): Promise<void> {
  const info = await lstat(source);
  if (info.isDirectory()) return copyDirectory(view, source, dest, ids, mode);
  const parent = await view.mkdirs(path.posix.dirname(dest));
  const host = view.host(path.posix.join(parent, path.posix.basename(dest)));
  const existing = await lstat(host).catch(() => undefined);
  if (existing?.isDirectory()) throw new Error(`cannot copy a file to ${dest}: it is a directory`);
  // replace rather than write through: an existing symlink must not redirect the copy
  if (existing) await unlink(host);
  if (info.isSymbolicLink()) {
    await symlink(await readlink(source), host);
    await lchown(host, ids.uid, ids.gid);
  } else if (info.isFile()) {
    await copyFile(source, host, constants.COPYFILE_FICLONE);
    await chown(host, ids.uid, ids.gid);
    // after chown, which may clear set-id bits
    await chmod(host, mode ?? info.mode & 0o7777);
    await utimes(host, info.atime, info.mtime);
  }
}
