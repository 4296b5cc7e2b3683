import type { BigIntStats } from "node:fs";
import path from "node:path";
import { create } from "@bufbuild/protobuf";
import { TimestampSchema } from "@bufbuild/protobuf/wkt";
import { type EntryInfo, EntryInfoSchema, FileType } from "@x/envd-client";
import type { EnvdContext } from "../context.js";
import { statEntries } from "../native/stat-entries.js";
import { lstat, readlink, realpath } from "../sync-fs.js";
import { listedEntryMetadata, readMetadata } from "./metadata.js";

const S_IFMT = 0o170000;
const S_IFDIR = 0o040000;
const S_IFREG = 0o100000;
const S_IFLNK = 0o120000;

const TYPE_LETTERS: Record<number, string> = {
  [S_IFDIR]: "d",
  [S_IFLNK]: "l",
  [S_IFREG]: "-",
  4802: "c",
  14406: "b",
  2401: "p",
  26411: "s",
};

export function fileTypeOf(mode: number): FileType {
  switch (mode & S_IFMT) {
    case S_IFREG:
      return FileType.FILE;
    case S_IFDIR:
      return FileType.DIRECTORY;
    case S_IFLNK:
      return FileType.SYMLINK;
    default:
      return FileType.UNSPECIFIED;
  }
}

/** `ls -l` style permissions, for example `-rw-r--r--`, `drwxrwxrwt`, `-rwsr-xr-x`. */
export function permissionString(mode: number): string {
  const triple = (shift: number, special: number, letter: string) => {
    const bits = (mode >> shift) & 7;
    const x = bits & 1;
    const exec = mode & special ? (x ? letter : letter.toUpperCase()) : x ? "x" : "-";
    return `${bits & 4 ? "r" : "-"}${bits & 2 ? "w" : "-"}${exec}`;
  };
  return (
    (TYPE_LETTERS[mode & S_IFMT] ?? "?") +
    triple(6, 0o4000, "s") +
    triple(3, 0o2000, "s") +
    triple(0, 0o1000, "t")
  );
}

/** Where a symlink finally points: fully resolved, or its literal target made absolute when dangling. */
async function symlinkTarget(absPath: string): Promise<string> {
  try {
    return await realpath(absPath);
  } catch {
    return path.resolve(path.dirname(absPath), await readlink(absPath));
  }
}

/** Describes `absPath` itself (a final symlink is not followed). Throws the fs error when missing. */
export async function entryInfo(ctx: EnvdContext, absPath: string): Promise<EntryInfo> {
  const st: BigIntStats = await lstat(absPath, { bigint: true });
  return entryFromStats(ctx, absPath, st);
}

export async function entryFromStats(ctx: EnvdContext, absPath: string, st: BigIntStats): Promise<EntryInfo> {
  const type = fileTypeOf(Number(st.mode));
  const [owner, group, metadata, target] = await Promise.all([
    ctx.names.user(Number(st.uid)),
    ctx.names.group(Number(st.gid)),
    readMetadata(absPath).catch(() => ({})),
    type === FileType.SYMLINK ? symlinkTarget(absPath).catch(() => undefined) : undefined,
  ]);
  const entryStats = {
    mode: Number(st.mode),
    size: st.size,
    mtimeSeconds: st.mtimeNs / 1_000_000_000n,
    mtimeNanos: Number(st.mtimeNs % 1_000_000_000n),
  };
  return buildEntry(absPath, entryStats, owner, group, metadata, target);
}

/** What a listing needs of an entry's stats to go on into it (see access.ts `allowed`). */
export interface ListedStats {
  mode: number;
  uid: number;
  gid: number;
  isDirectory(): boolean;
}

/**
 * Describes the entries `names` of `dir` (missing ones are left out) from one call into the
 * addon for all their lstats and xattr names, as readdir+stat would: a listing of thousands of
 * entries would otherwise pay two calls and a stats object per entry. Only symlinks wait for
 * realpath, and only entries carrying envd's xattrs have them read.
 */
export async function entriesOf(
  ctx: EnvdContext,
  dir: string,
  names: string[],
): Promise<{ entry: EntryInfo; st: ListedStats }[]> {
  const ids = await ctx.names.lookups();
  const stats = statEntries(dir, names);
  const out: { entry: EntryInfo; st: ListedStats }[] = [];
  for (let i = 0; i < names.length; i++) {
    const st = stats[i];
    if (!st) continue; // gone or unreadable meanwhile: left out, as a failed lstat always was
    const abs = path.join(dir, names[i]!);
    const type = fileTypeOf(st.mode);
    const target = type === FileType.SYMLINK ? await symlinkTarget(abs).catch(() => undefined) : undefined;
    const entryStats = {
      mode: st.mode,
      size: BigInt(st.size),
      mtimeSeconds: BigInt(st.mtimeSec),
      mtimeNanos: st.mtimeNsec,
    };
    const metadata = listedEntryMetadata(abs, st.xattrs);
    const entry = buildEntry(abs, entryStats, ids.user(st.uid), ids.group(st.gid), metadata, target);
    const { mode, uid, gid } = st;
    out.push({ entry, st: { mode, uid, gid, isDirectory: () => (mode & S_IFMT) === S_IFDIR } });
  }
  return out;
}

/** What an entry's description needs of its stats, as lstat or statEntries give them. */
interface EntryStats {
  mode: number;
  size: bigint;
  mtimeSeconds: bigint;
  mtimeNanos: number;
}

function buildEntry(
  absPath: string,
  st: EntryStats,
  owner: string,
  group: string,
  metadata: Record<string, string>,
  symlinkTarget: string | undefined,
): EntryInfo {
  return create(EntryInfoSchema, {
    name: path.basename(absPath) || "/",
    type: fileTypeOf(st.mode),
    path: absPath,
    size: st.size,
    // Permission bits only, as e2b's envd reports them (Go's FileMode.Perm()); the type is in `type`.
    mode: st.mode & 0o777,
    permissions: permissionString(st.mode),
    owner,
    group,
    modifiedTime: create(TimestampSchema, { seconds: st.mtimeSeconds, nanos: st.mtimeNanos }),
    symlinkTarget,
    metadata,
  });
}
