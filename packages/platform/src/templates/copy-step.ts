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
import { fdPath, TenantTree } from "../lib/tenant-tree.js";
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
  /** Told of each entry of the archive that is not copied (FIFOs, devices, sockets). */
  onSkipped?(entry: string, kind: string): void;
}

/**
 * Why a COPY source cannot be used, or undefined: like the public client, the source must be
 * relative and stay inside the build context (`foo/../bar` is fine, `../foo` is not).
 */
export function invalidSource(src: string): string | undefined {
  if (src.startsWith("/")) return `'${src}' is an absolute path: sources are relative to the build context`;
  const normalized = path.posix.normalize(src);
  if (normalized === ".." || normalized.startsWith("../"))
    return `'${src}' leaves the build context: sources must stay inside it`;
  return undefined;
}

/**
 * The directory the client's archive holds a source under: the source up to its first glob
 * (the client expands globs itself and archives the matches with their relative paths).
 */
export function sourceRoot(src: string): string {
  const reason = invalidSource(src);
  if (reason) throw new Error(reason);
  const parts = path.posix
    .normalize(src)
    .split("/")
    .filter((p) => p !== "" && p !== ".");
  const glob = parts.findIndex((p) => /[*?[{]/.test(p));
  return (glob < 0 ? parts : parts.slice(0, glob)).join("/");
}

type Ids = { uid: number; gid: number };

/** Both ends of a copy: the unpacked archive (no link followed) and the layer's root filesystem. */
interface Copy {
  source: TenantTree;
  dest: TenantTree;
  ids: Ids;
  mode: number | undefined;
  onSkipped?(entry: string, kind: string): void;
}

/**
 * A COPY step on the host: the archive is unpacked into scratch space and its files copied
 * through `view` (an overlay whose upper directory becomes the step's layer). Like the public
 * service: a file source lands at `dest` exactly (inside it when `dest` is a directory or ends
 * in '/'), a directory source's contents land in `dest`; everything copied is owned by `owner`.
 * Both sides are TenantTrees: the archive's own links are copied as links and never followed
 * (an `s -> /` member cannot make `s/etc/shadow` a host file), and destinations resolve inside
 * the layer's root filesystem.
 */
export async function copyFromArchive(view: RootfsView, o: CopyOptions): Promise<void> {
  const rel = sourceRoot(o.src);
  const unpack = path.join(o.scratch, "unpack");
  await mkdir(unpack, { recursive: true, mode: 0o700 });
  // GNU tar strips leading '/' and '..' from member names and defers symlinks that could
  // redirect later members, so the archive cannot write outside `unpack`
  // its complaints are about the tenant's archive: read as much as a message needs, no more
  await command("tar", ["-x", "--no-same-owner", "-f", o.archive, "-C", unpack], {
    timeoutMs: 30 * 60_000,
    maxOutputBytes: 2 ** 20,
  });
  const ids = await view.owner(o.owner || o.user);
  const start = o.workdir ?? (await view.user(o.user))?.home ?? "/";
  let target = path.posix.resolve(start, o.dest);
  await TenantTree.with(unpack, (source) =>
    view.with(async (dest) => {
      const info = sourceInfo(source, rel, o.src);
      const copy: Copy = { source, dest, ids, mode: o.mode, onSkipped: o.onSkipped };
      if (info.isDirectory()) return copyDirectory(copy, rel, target);
      if (o.dest.endsWith("/") || dest.stat(target)?.isDirectory())
        target = path.posix.join(target, path.posix.basename(rel));
      return copyEntry(copy, rel, target);
    }),
  );
}

function sourceInfo(source: TenantTree, rel: string, src: string) {
  try {
    const info = source.lstat(rel, "refuse");
    if (info) return info;
  } catch {
    // a link on the way: what lies behind it was not uploaded
  }
  throw new Error(`'${src}' is not among the uploaded files`);
}

async function copyDirectory(c: Copy, source: string, dest: string): Promise<void> {
  const existing = c.dest.stat(dest);
  if (existing && !existing.isDirectory())
    throw new Error(`cannot copy a directory to ${dest}: it exists and is not a directory`);
  await c.dest.withDir(dest, { create: 0o755 }, async (dir) => {
    if (!existing) {
      await chown(dir, c.ids.uid, c.ids.gid);
      await chmod(dir, c.source.lstat(source, "refuse")!.mode & 0o7777);
    }
  });
  const names = await c.source.withDir(source, { links: "refuse" }, (dir) => readdir(dir));
  for (const name of names) {
    await copyEntry(c, source ? `${source}/${name}` : name, path.posix.join(dest, name));
  }
}

async function copyEntry(c: Copy, source: string, dest: string): Promise<void> {
  const info = c.source.lstat(source, "refuse");
  if (!info) return;
  if (info.isDirectory()) return copyDirectory(c, source, dest);
  if (!info.isFile() && !info.isSymbolicLink()) {
    c.onSkipped?.(source, info.isFIFO() ? "a FIFO" : info.isSocket() ? "a socket" : "a device");
    return;
  }
  await c.dest.withDir(path.posix.dirname(dest), { create: 0o755 }, async (dir) => {
    const host = path.join(dir, path.posix.basename(dest));
    const existing = await lstat(host).catch(() => undefined);
    if (existing?.isDirectory()) throw new Error(`cannot copy a file to ${dest}: it is a directory`);
    // replace rather than write through: an existing symlink must not redirect the copy
    if (existing) await unlink(host);
    if (info.isSymbolicLink()) {
      const target = await c.source.withDir(path.posix.dirname(source), { links: "refuse" }, (at) =>
        readlink(path.join(at, path.posix.basename(source))),
      );
      await symlink(target, host);
      await lchown(host, c.ids.uid, c.ids.gid);
      return;
    }
    await c.source.withFile(source, { links: "refuse" }, async (fd, stats) => {
      // EXCL: the name was just freed; nothing may stand there that the copy would follow
      await copyFile(fdPath(fd), host, constants.COPYFILE_EXCL | constants.COPYFILE_FICLONE);
      await chown(host, c.ids.uid, c.ids.gid);
      // after chown, which may clear set-id bits
      await chmod(host, c.mode ?? stats.mode & 0o7777);
      await utimes(host, stats.atime, stats.mtime);
    });
  });
}
