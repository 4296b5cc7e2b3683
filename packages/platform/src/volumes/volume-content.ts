import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, type ReadStream, type Stats } from "node:fs";
import {
  chmod,
  chown,
  lchown,
  link,
  lstat,
  mkdir,
  readdir,
  readlink,
  rename,
  rm,
  unlink,
} from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { TenantFileError, TenantTree } from "../lib/tenant-tree.js";
import { conflict, DomainError, invalid, noSpace, notFound } from "../model/errors.js";
import { VOLUME_DEFAULT_OWNER } from "../model/volume.js";

/**
 * The content API's file operations inside one volume, on its `nosymfollow` view (see
 * volume-disk.ts): paths are made absolute and normal, so `..` stops at the volume's root, and
 * the kernel refuses symlinks on the way. Semantics follow E2B's: without `force`, what exists
 * is a 409 and a missing parent a 404.
 */

export type EntryType = "unknown" | "file" | "directory" | "symlink";

export interface VolumeEntry {
  name: string;
  type: EntryType;
  /** Absolute within the volume. */
  path: string;
  target?: string;
  size: number;
  mode: number;
  uid: number;
  gid: number;
  atime: string;
  mtime: string;
  ctime: string;
}

export interface Ownership {
  uid?: number;
  gid?: number;
  mode?: number;
}

export interface CreateOptions extends Ownership {
  force?: boolean;
}

/** Deepest `depth` a listing takes (E2B's bound). */
const MAX_DEPTH = 10;
/** Most entries one listing answers: a sandbox sharing the volume decides how many there are. */
export const MAX_LIST_ENTRIES = 100_000;
const DEFAULT_FILE_MODE = 0o644;
const DEFAULT_DIR_MODE = 0o755;

export class VolumeContent {
  constructor(
    /** The `nosymfollow` view of the volume's root. */
    private readonly root: string,
    /** For messages: "volume 'name'". */
    private readonly label: string,
    private readonly sizeMB: number,
  ) {}

  /** The path as the volume shows it: absolute, normal, never above its root. */
  static normalise(p: string): string {
    return path.posix.normalize(`/${p}`).replace(/(.)\/$/, "$1");
  }

  private host(inVolume: string): string {
    return inVolume === "/" ? this.root : path.join(this.root, inVolume);
  }

  /** Maps the file system's refusals to the API's answers; other errors go on as they are. */
  private fail(err: unknown, p: string): never {
    const code = (err as NodeJS.ErrnoException).code;
    switch (code) {
      case "ENOENT":
        throw notFound(`Path ${p} not found`);
      case "EEXIST":
        throw conflict(`Path ${p} already exists`);
      case "ENOTEMPTY":
        throw conflict(`Path ${p} is a directory that is not empty`);
      case "ENOTDIR":
        throw invalid(`a parent of ${p} is not a directory`);
      case "EISDIR":
        throw invalid(`Path ${p} is a directory`);
      case "ELOOP":
        throw invalid(`${p} goes through a symbolic link: the content API does not follow links`);
      case "ENAMETOOLONG":
        throw invalid(`Path ${p} is too long`);
      case "ENOSPC":
      case "EDQUOT":
        throw noSpace(`${this.label} is full (${this.sizeMB} MB): nothing of ${p} was kept`);
      default:
        throw err;
    }
  }

  private entry(p: string, s: Stats, target?: string): VolumeEntry {
    const type: EntryType = s.isFile()
      ? "file"
      : s.isDirectory()
        ? "directory"
        : s.isSymbolicLink()
          ? "symlink"
          : "unknown";
    return {
      name: p === "/" ? "/" : path.posix.basename(p),
      type,
      path: p,
      ...(target !== undefined ? { target } : {}),
      size: s.size,
      mode: s.mode & 0o7777,
      uid: s.uid,
      gid: s.gid,
      atime: s.atime.toISOString(),
      mtime: s.mtime.toISOString(),
      ctime: s.ctime.toISOString(),
    };
  }

  async stat(raw: string): Promise<VolumeEntry> {
    const p = VolumeContent.normalise(raw);
    try {
      const s = await lstat(this.host(p));
      return this.entry(p, s, s.isSymbolicLink() ? await readlink(this.host(p)) : undefined);
    } catch (err) {
      this.fail(err, p);
    }
  }

  /** The directory's entries, each subdirectory's after it, down to `depth` levels. */
  async list(raw: string, depth = 1): Promise<VolumeEntry[]> {
    const p = VolumeContent.normalise(raw);
    if (depth > MAX_DEPTH) throw invalid(`depth must be at most ${MAX_DEPTH}, got ${depth}`);
    const top = await this.stat(p);
    if (top.type !== "directory") throw notFound(`Path ${p} not found or not a directory`);
    const out: VolumeEntry[] = [];
    const walk = async (dir: string, level: number): Promise<void> => {
      let names: string[];
      try {
        names = (await readdir(this.host(dir))).sort();
      } catch (err) {
        // a directory a sandbox removed while we listed is simply not there any more
        if ((err as NodeJS.ErrnoException).code === "ENOENT") return;
        this.fail(err, dir);
      }
      for (const name of names) {
        const child = path.posix.join(dir, name);
        const entry = await this.stat(child).catch((err: unknown) => {
          if (err instanceof DomainError && err.code === "not_found") return undefined;
          throw err;
        });
        if (!entry) continue;
        if (out.length >= MAX_LIST_ENTRIES)
          throw invalid(
            `${p} holds more than ${MAX_LIST_ENTRIES} entries to depth ${depth}: list a deeper path or a smaller depth`,
          );
        out.push(entry);
        if (entry.type === "directory" && level < depth) await walk(child, level + 1);
      }
    };
    await walk(p, 1);
    return out;
  }

  private async own(hostPath: string, o: Ownership, mode: number): Promise<void> {
    await chown(hostPath, o.uid ?? VOLUME_DEFAULT_OWNER.uid, o.gid ?? VOLUME_DEFAULT_OWNER.gid);
    // explicit: the platform's umask must not decide the mode
    await chmod(hostPath, mode);
  }

  /** Creates the missing directories above `p` (owned as asked). */
  private async makeParents(p: string, o: Ownership): Promise<void> {
    const parts = path.posix.dirname(p).split("/").filter(Boolean);
    let at = "/";
    for (const part of parts) {
      at = path.posix.join(at, part);
      try {
        await mkdir(this.host(at));
        await this.own(this.host(at), o, DEFAULT_DIR_MODE);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") this.fail(err, at);
        const s = await lstat(this.host(at)).catch((e: unknown) => this.fail(e, at));
        if (!s.isDirectory()) throw invalid(`${at} is not a directory`);
      }
    }
  }

  async makeDir(raw: string, o: CreateOptions): Promise<VolumeEntry> {
    const p = VolumeContent.normalise(raw);
    if (p === "/") {
      if (o.force) return this.stat(p);
      throw conflict("Path / already exists");
    }
    if (o.force) await this.makeParents(p, o);
    try {
      await mkdir(this.host(p));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EEXIST" && o.force) {
        const existing = await this.stat(p);
        if (existing.type === "directory") return existing;
        throw conflict(`Path ${p} exists and is not a directory`);
      }
      this.fail(err, p);
    }
    await this.own(this.host(p), o, o.mode ?? DEFAULT_DIR_MODE);
    return this.stat(p);
  }

  /**
   * Streams `body` into a new file beside the target, then puts it in place in one step: a
   * link that fails if the target appeared meanwhile (no force), or a rename over it (force).
   * A write cut short or out of space leaves nothing behind.
   */
  async writeFile(raw: string, body: Readable, o: CreateOptions): Promise<VolumeEntry> {
    const p = VolumeContent.normalise(raw);
    if (p === "/") throw invalid("Path / is the volume's root, not a file");
    if (o.force) await this.makeParents(p, o);
    else {
      // refused before the body is read: nothing is uploaded for nothing
      const existing = await lstat(this.host(p)).catch(() => undefined);
      if (existing) throw conflict(`Path ${p} already exists: write with force to replace it`);
    }
    const parent = await lstat(this.host(path.posix.dirname(p))).catch((e: unknown) => this.fail(e, p));
    if (!parent.isDirectory()) throw invalid(`a parent of ${p} is not a directory`);
    const staging = this.host(
      path.posix.join(path.posix.dirname(p), `.x-upload-${randomBytes(6).toString("hex")}`),
    );
    try {
      await pipeline(body, createWriteStream(staging, { flags: "wx", mode: 0o600 }));
      await this.own(staging, o, o.mode ?? DEFAULT_FILE_MODE);
      if (o.force) {
        const existing = await lstat(this.host(p)).catch(() => undefined);
        if (existing?.isDirectory()) throw conflict(`Path ${p} is a directory`);
        await rename(staging, this.host(p));
      } else {
        await link(staging, this.host(p));
      }
    } catch (err) {
      await unlink(staging).catch(() => undefined);
      if (err instanceof DomainError) throw err;
      this.fail(err, p);
    }
    if (!o.force) await unlink(staging);
    return this.stat(p);
  }

  /** A file's bytes as a stream, with its size; directories and special files are refused. */
  async readFile(raw: string): Promise<{ size: number; stream: ReadStream }> {
    const p = VolumeContent.normalise(raw);
    const entry = await this.stat(p);
    if (entry.type === "directory") throw invalid(`Path ${p} is a directory`);
    if (entry.type !== "file") throw invalid(`Path ${p} is a ${entry.type}, not a regular file`);
    // opened without blocking and checked again on the descriptor: a sandbox sharing the volume
    // may have put a FIFO in the file's place since the stat
    let file: ReturnType<TenantTree["openFile"]>;
    try {
      file = await TenantTree.with(this.root, (tree) => tree.openFile(p, { links: "refuse" }));
    } catch (err) {
      if (err instanceof TenantFileError) throw invalid(`Path ${err.message}`);
      this.fail(err, p);
    }
    if (!file) throw notFound(`Path ${p} not found`);
    return { size: file.stats.size, stream: createReadStream("", { fd: file.fd }) };
  }

  async updateMetadata(raw: string, o: Ownership): Promise<VolumeEntry> {
    const p = VolumeContent.normalise(raw);
    const entry = await this.stat(p);
    try {
      if (o.uid !== undefined || o.gid !== undefined) {
        // a link's own owner; its target is not followed
        await lchown(this.host(p), o.uid ?? entry.uid, o.gid ?? entry.gid);
      }
      if (o.mode !== undefined) {
        if (entry.type === "symlink")
          throw invalid(`Path ${p} is a symbolic link: links have no mode of their own`);
        await chmod(this.host(p), o.mode);
      }
    } catch (err) {
      if (err instanceof DomainError) throw err;
      this.fail(err, p);
    }
    return this.stat(p);
  }

  /** Removes a file, a link or a directory with everything in it. */
  async remove(raw: string): Promise<void> {
    const p = VolumeContent.normalise(raw);
    if (p === "/") throw invalid("the volume's root cannot be removed: delete the volume instead");
    await this.stat(p);
    try {
      await rm(this.host(p), { recursive: true, force: false });
    } catch (err) {
      this.fail(err, p);
    }
  }
}
