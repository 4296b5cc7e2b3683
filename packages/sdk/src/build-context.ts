import { createHash } from "node:crypto";
import { lstat, readdir, readFile, readlink } from "node:fs/promises";
import path from "node:path";
import { promisify } from "node:util";
import { gzip as gzipCallback } from "node:zlib";
import { InvalidArgumentError } from "./errors.js";

const gzip = promisify(gzipCallback);

/** One file, directory or symlink of a COPY step, by its path relative to the context. */
interface ContextEntry {
  /** POSIX path relative to the context directory. */
  name: string;
  kind: "file" | "dir" | "symlink";
  mode: number;
  mtimeSeconds: number;
  /** Content of a file, target of a symlink. */
  data?: Buffer;
  linkname?: string;
}

const GLOB = /[*?[]/;

function globToRegExp(segment: string): RegExp {
  let source = "";
  for (const ch of segment) {
    if (ch === "*") source += "[^/]*";
    else if (ch === "?") source += "[^/]";
    else source += ch.replace(/[\\^$.+(){}|[\]]/g, "\\$&");
  }
  return new RegExp(`^${source}$`);
}

/** Paths (relative, POSIX) under `contextDir` that `src` names, expanding `*` and `?` per segment. */
async function expand(contextDir: string, src: string): Promise<string[]> {
  if (path.isAbsolute(src) || src.split("/").includes(".."))
    throw new InvalidArgumentError(
      `COPY source '${src}' must be a path inside the build context, not above it`,
    );
  const segments = src.split("/").filter((s) => s !== "" && s !== ".");
  let matches = [""];
  for (const segment of segments) {
    const next: string[] = [];
    for (const base of matches) {
      if (!GLOB.test(segment)) {
        next.push(base ? `${base}/${segment}` : segment);
        continue;
      }
      const names = await readdir(path.join(contextDir, base)).catch(() => [] as string[]);
      const re = globToRegExp(segment);
      for (const name of names.sort()) if (re.test(name)) next.push(base ? `${base}/${name}` : name);
    }
    matches = next;
  }
  return matches;
}

async function collect(contextDir: string, name: string, into: ContextEntry[]): Promise<void> {
  const full = path.join(contextDir, name);
  const info = await lstat(full);
  const common = { name, mode: info.mode & 0o7777, mtimeSeconds: Math.floor(info.mtimeMs / 1000) };
  if (info.isSymbolicLink()) {
    into.push({ ...common, kind: "symlink", linkname: await readlink(full) });
  } else if (info.isDirectory()) {
    if (name !== "") into.push({ ...common, kind: "dir" });
    for (const child of (await readdir(full)).sort())
      await collect(contextDir, name ? `${name}/${child}` : child, into);
  } else if (info.isFile()) {
    into.push({ ...common, kind: "file", data: await readFile(full) });
  }
}

/** The files of a COPY step: a content hash (the upload's cache key) and the archive to upload. */
export interface CopyFiles {
  hash: string;
  archive(gzipped: boolean): Promise<Uint8Array>;
}

/**
 * Reads what `src` names under `contextDir`. The hash covers the step (`COPY src dest`) and each
 * entry's path, mode, size and content, so it changes exactly when the uploaded files would.
 */
export async function readCopyFiles(contextDir: string, src: string, dest: string): Promise<CopyFiles> {
  const entries: ContextEntry[] = [];
  for (const match of await expand(contextDir, src)) {
    try {
      await collect(contextDir, match, entries);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
  }
  if (entries.length === 0)
    throw new InvalidArgumentError(`COPY source '${src}' matches no files under ${contextDir}`);
  const hash = createHash("sha256").update(`COPY ${src} ${dest}`);
  for (const e of entries) {
    hash.update(`\n${e.name}\n${e.kind}\n${e.mode}\n${e.data?.length ?? 0}\n`);
    if (e.data) hash.update(e.data);
    if (e.linkname) hash.update(e.linkname);
  }
  return {
    hash: hash.digest("hex"),
    archive: async (gzipped) => {
      const tar = tarArchive(entries);
      return gzipped ? new Uint8Array(await gzip(tar)) : tar;
    },
  };
}

function octal(value: number, width: number): string {
  return `${value.toString(8).padStart(width - 1, "0")}\0`;
}

function header(
  name: string,
  type: string,
  size: number,
  mode: number,
  mtime: number,
  linkname = "",
): Buffer {
  const block = Buffer.alloc(512);
  block.write(name, 0, 100, "utf8");
  block.write(octal(mode, 8), 100, "ascii");
  block.write(octal(0, 8), 108, "ascii");
  block.write(octal(0, 8), 116, "ascii");
  block.write(octal(size, 12), 124, "ascii");
  block.write(octal(mtime, 12), 136, "ascii");
  block.write("        ", 148, "ascii");
  block.write(type, 156, "ascii");
  block.write(linkname, 157, 100, "utf8");
  block.write("ustar\0", 257, "ascii");
  block.write("00", 263, "ascii");
  let sum = 0;
  for (const byte of block) sum += byte;
  block.write(`${sum.toString(8).padStart(6, "0")}\0 `, 148, "ascii");
  return block;
}

function padded(data: Buffer): Buffer[] {
  const rest = data.length % 512;
  return rest === 0 ? [data] : [data, Buffer.alloc(512 - rest)];
}

/** A PAX record `"<len> <key>=<value>\n"`, where len counts the whole record. */
function paxRecord(key: string, value: string): string {
  const body = ` ${key}=${value}\n`;
  const base = Buffer.byteLength(body);
  let len = base;
  while (base + String(len).length !== len) len = base + String(len).length;
  return `${len}${body}`;
}

/** A POSIX (ustar + PAX for long names) tar archive of the entries. */
function tarArchive(entries: ContextEntry[]): Uint8Array {
  const blocks: Buffer[] = [];
  for (const e of entries) {
    const name = e.kind === "dir" ? `${e.name}/` : e.name;
    const linkname = e.linkname ?? "";
    if (Buffer.byteLength(name) > 100 || Buffer.byteLength(linkname) > 100) {
      const pax = Buffer.from(paxRecord("path", name) + (linkname ? paxRecord("linkpath", linkname) : ""));
      blocks.push(header("pax-header", "x", pax.length, 0o644, e.mtimeSeconds), ...padded(pax));
    }
    const short = Buffer.from(name).subarray(0, 100).toString("utf8");
    const type = e.kind === "file" ? "0" : e.kind === "dir" ? "5" : "2";
    const size = e.data?.length ?? 0;
    blocks.push(header(short, type, size, e.mode, e.mtimeSeconds, linkname.slice(0, 100)));
    if (e.data && size > 0) blocks.push(...padded(e.data));
  }
  blocks.push(Buffer.alloc(1024));
  return new Uint8Array(Buffer.concat(blocks));
}
