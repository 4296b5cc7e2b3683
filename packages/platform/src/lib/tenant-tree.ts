import {
  closeSync,
  constants as fsConstants,
  fstatSync,
  mkdirSync,
  openSync,
  readSync,
  type Stats,
} from "node:fs";
import path from "node:path";
import { hostFs } from "./host-native.js";

/**
 * How links on a path inside a tenant's tree are treated:
 * - "refuse": no symbolic link anywhere on the path (an unpacked archive: a link there is
 *   content to copy as a link, never a way to somewhere else);
 * - "inside": links resolved as the sandbox's own kernel would, with the tree as `/` (absolute
 *   targets and `..` never leave it): a root filesystem whose `/bin -> usr/bin` must work.
 * Both refuse `..` above the root, /proc magic links and crossing into another mount.
 */
export type Links = "refuse" | "inside";

/** A path of a tenant's tree that the host will not use: a link, a FIFO, a device, too large. */
export class TenantFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "TenantFileError";
  }
}

/** The largest file the host reads whole from a tenant's tree unless a caller says otherwise. */
export const DEFAULT_MAX_READ = 4 * 2 ** 20;

/** The host path of an open descriptor: a name for the very inode the descriptor holds. */
export function fdPath(fd: number): string {
  return `/proc/self/fd/${fd}`;
}

function code(err: unknown): string | undefined {
  return (err as NodeJS.ErrnoException | undefined)?.code;
}

function kindOf(stats: Stats): string {
  if (stats.isSymbolicLink()) return "a symbolic link";
  if (stats.isFIFO()) return "a FIFO";
  if (stats.isCharacterDevice() || stats.isBlockDevice()) return "a device";
  if (stats.isSocket()) return "a socket";
  if (stats.isDirectory()) return "a directory";
  return "not a regular file";
}

/** `p` as a path relative to the tree's root ("" for the root itself), `..` kept for the kernel to judge. */
function relative(p: string): string {
  return (
    p
      .split("/")
      .filter((part) => part !== "" && part !== ".")
      .join("/") || "."
  );
}

/**
 * A directory tree a tenant controls (a sandbox's root filesystem, a template layer, an
 * unpacked build context, a volume), opened by the host. Every path is resolved by the kernel
 * (openat2) beneath the tree's root, so nothing a tenant plants (`etc -> /etc`, `s -> /`,
 * `../../`, a bind-mount target) leads the host outside it, and nothing is opened until its type
 * is known: a FIFO or device where a file should be is an error, never a blocked thread or an
 * endless read. Every host-side access to tenant data goes through one of these.
 *
 * Descriptors are synchronous system calls (microseconds, no thread-pool trip); what `withDir`
 * and `withFile` hand out is a `/proc/self/fd/N` path, usable with any fs call (async too) and
 * pinned to the inode opened, not to a name the tenant could swap.
 */
export class TenantTree {
  private fd: number | undefined;

  private constructor(
    /** The tree's root on the host (the platform's own path, trusted). */
    readonly root: string,
    fd: number,
  ) {
    this.fd = fd;
  }

  /** Opens the tree rooted at `root`, a directory the platform itself chose. */
  static open(root: string): TenantTree {
    const { openat2, constants: c } = hostFs();
    return new TenantTree(root, openat2(c.AT_FDCWD, root, c.O_PATH | c.O_DIRECTORY, 0, 0));
  }

  /** Runs `fn` with the tree open, closing it after (also when `fn` fails). */
  static async with<T>(root: string, fn: (tree: TenantTree) => Promise<T> | T): Promise<T> {
    const tree = TenantTree.open(root);
    try {
      return await fn(tree);
    } finally {
      tree.close();
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }

  private rootFd(): number {
    if (this.fd === undefined) throw new Error(`tenant tree ${this.root} is closed`);
    return this.fd;
  }

  private resolveFlags(links: Links): number {
    const c = hostFs().constants;
    const common = c.RESOLVE_NO_MAGICLINKS | c.RESOLVE_NO_XDEV;
    return links === "refuse"
      ? common | c.RESOLVE_BENEATH | c.RESOLVE_NO_SYMLINKS
      : common | c.RESOLVE_IN_ROOT;
  }

  /**
   * An O_PATH descriptor of `p` (nothing is opened for reading: no device or FIFO is touched).
   * The last component is followed only when `followLast` (and never under "refuse").
   * Undefined when it does not exist.
   */
  private pathFd(p: string, links: Links, followLast: boolean): number | undefined {
    const { openat2, constants: c } = hostFs();
    const flags = c.O_PATH | (followLast && links === "inside" ? 0 : c.O_NOFOLLOW);
    try {
      return openat2(this.rootFd(), relative(p), flags, this.resolveFlags(links), 0);
    } catch (err) {
      if (code(err) === "ENOENT" || code(err) === "ENOTDIR") return undefined;
      throw this.explain(err, p);
    }
  }

  private explain(err: unknown, p: string): Error {
    switch (code(err)) {
      case "ELOOP":
        return new TenantFileError(`${p}: a symbolic link on the path is not followed here`);
      case "EXDEV":
        return new TenantFileError(`${p}: the path leaves the tree (.., an absolute link or another mount)`);
      default:
        return err as Error;
    }
  }

  /** What `p` is, without following its last component; undefined when it does not exist. */
  lstat(p: string, links: Links = "inside"): Stats | undefined {
    const fd = this.pathFd(p, links, false);
    if (fd === undefined) return undefined;
    try {
      return fstatSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /** What `p` is with its last link followed (inside the tree); undefined when it does not exist. */
  stat(p: string): Stats | undefined {
    const fd = this.pathFd(p, "inside", true);
    if (fd === undefined) return undefined;
    try {
      return fstatSync(fd);
    } finally {
      closeSync(fd);
    }
  }

  /**
   * Opens the regular file `p` for reading: its descriptor (the caller closes it) and stats.
   * Throws TenantFileError when it is a link that may not be followed, a FIFO, a device or
   * larger than `maxBytes`; undefined when it does not exist.
   */
  openFile(
    p: string,
    opts: { links?: Links; followLast?: boolean; maxBytes?: number },
  ): { fd: number; stats: Stats } | undefined {
    const links = opts.links ?? "inside";
    const at = this.pathFd(p, links, opts.followLast ?? links === "inside");
    if (at === undefined) return undefined;
    try {
      const stats = fstatSync(at);
      if (!stats.isFile()) throw new TenantFileError(`${p} is ${kindOf(stats)}, not a regular file`);
      if (opts.maxBytes !== undefined && stats.size > opts.maxBytes)
        throw new TenantFileError(`${p} is larger than ${opts.maxBytes} bytes`);
      // reopened through the O_PATH descriptor: the same inode, now known to be a regular file
      const fd = openSync(fdPath(at), fsConstants.O_RDONLY | fsConstants.O_NONBLOCK | fsConstants.O_NOCTTY);
      const opened = fstatSync(fd);
      if (opened.ino !== stats.ino || opened.dev !== stats.dev) {
        closeSync(fd);
        throw new TenantFileError(`${p} changed while it was opened`);
      }
      return { fd, stats: opened };
    } finally {
      closeSync(at);
    }
  }

  /** Runs `fn` with the regular file `p` open for reading (see openFile); undefined when absent. */
  async withFile<T>(
    p: string,
    opts: { links?: Links; followLast?: boolean; maxBytes?: number },
    fn: (fd: number, stats: Stats) => Promise<T> | T,
  ): Promise<T | undefined> {
    const file = this.openFile(p, opts);
    if (!file) return undefined;
    try {
      return await fn(file.fd, file.stats);
    } finally {
      closeSync(file.fd);
    }
  }

  /**
   * The content of the regular file `p` (at most `maxBytes`, 4 MiB by default); undefined when
   * it does not exist. Throws TenantFileError for anything but a regular file of that size.
   */
  async readFile(p: string, opts: { links?: Links; maxBytes?: number } = {}): Promise<Buffer | undefined> {
    const maxBytes = opts.maxBytes ?? DEFAULT_MAX_READ;
    return this.withFile(p, { ...opts, maxBytes }, (fd, stats) => {
      // one byte more than allowed: a file that grew after fstat is refused, not cut
      const buffer = Buffer.alloc(Math.min(stats.size, maxBytes) + 1);
      let length = 0;
      while (length < buffer.length) {
        const n = readSync(fd, buffer, length, buffer.length - length, null);
        if (n === 0) break;
        length += n;
      }
      if (length > maxBytes) throw new TenantFileError(`${p} is larger than ${maxBytes} bytes`);
      return buffer.subarray(0, length);
    });
  }

  /**
   * Runs `fn` with a host path for the directory `dir` of the tree (a `/proc/self/fd/N` path,
   * so `path.join(dirPath, name)` names an entry of exactly that directory, whatever is renamed
   * or relinked meanwhile). With `create`, missing directories are made like `mkdir -p` inside
   * the tree (mode `create`, root's). Throws TenantFileError when `dir` (or, creating, a
   * component of it) exists and is not a directory.
   */
  async withDir<T>(
    dir: string,
    opts: { links?: Links; create?: number },
    fn: (dirPath: string) => Promise<T> | T,
  ): Promise<T> {
    const links = opts.links ?? "inside";
    const fd = opts.create === undefined ? this.openDir(dir, links) : this.makeDirs(dir, links, opts.create);
    try {
      return await fn(fdPath(fd));
    } finally {
      closeSync(fd);
    }
  }

  private openDir(dir: string, links: Links): number {
    const { openat2, constants: c } = hostFs();
    const nofollow = links === "refuse" ? c.O_NOFOLLOW : 0;
    try {
      return openat2(
        this.rootFd(),
        relative(dir),
        c.O_PATH | c.O_DIRECTORY | nofollow,
        this.resolveFlags(links),
        0,
      );
    } catch (err) {
      if (code(err) === "ENOTDIR") throw new TenantFileError(`${dir} is not a directory`);
      throw this.explain(err, dir);
    }
  }

  private makeDirs(dir: string, links: Links, mode: number): number {
    const parts = relative(dir)
      .split("/")
      .filter((p) => p !== ".");
    let fd = this.openDir(".", links);
    try {
      for (const [i, part] of parts.entries()) {
        const prefix = parts.slice(0, i + 1).join("/");
        let next: number;
        try {
          next = this.openDir(prefix, links);
        } catch (err) {
          if (code(err) !== "ENOENT") throw err;
          if (part === "..") throw new TenantFileError(`${dir}: cannot create '..'`);
          try {
            mkdirSync(path.join(fdPath(fd), part), { mode });
          } catch (made) {
            // a dangling link or a file there: the sandbox's own `mkdir -p` would fail too
            if (code(made) === "EEXIST") throw new TenantFileError(`${prefix} exists and is not a directory`);
            throw made;
          }
          next = this.openDir(prefix, links);
        }
        closeSync(fd);
        fd = next;
      }
      return fd;
    } catch (err) {
      closeSync(fd);
      throw err;
    }
  }
}
