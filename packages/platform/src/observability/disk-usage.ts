import { lstat, readdir, stat, statfs } from "node:fs/promises";
import path from "node:path";
import { TenantTree } from "../lib/tenant-tree.js";

/** Entries a walk counts at most: the tree is the sandbox's, which decides how many there are. */
const MAX_WALK_ENTRIES = 100_000;

/**
 * Bytes a sandbox's writable layer occupies. On its own disk (a user sandbox's: rootfs/disk.ts)
 * that is the disk's used blocks, one statfs whatever the sandbox holds. Otherwise the tree is
 * walked like `du -s` (allocated blocks, hard links counted once, links not followed) through
 * descriptors, so a directory the running sandbox swaps for a link never leads the walk onto
 * the host, and only the first MAX_WALK_ENTRIES entries count.
 */
export async function diskUsage(upper: string): Promise<number> {
  const [own, outer] = await Promise.all([
    stat(upper).catch(() => undefined),
    stat(path.dirname(path.dirname(upper))).catch(() => undefined),
  ]);
  if (!own) return 0;
  if (outer && own.dev !== outer.dev) {
    const fs = await statfs(upper);
    return (fs.blocks - fs.bfree) * fs.bsize;
  }
  return TenantTree.with(upper, (tree) => walk(tree));
}

async function walk(tree: TenantTree): Promise<number> {
  const seen = new Set<string>();
  const pending = ["."];
  let bytes = 0;
  let entries = 0;
  while (pending.length > 0 && entries < MAX_WALK_ENTRIES) {
    const dir = pending.pop()!;
    await tree
      .withDir(dir, { links: "refuse" }, async (at) => {
        bytes += (await lstat(at)).blocks * 512;
        for (const name of await readdir(at)) {
          if (++entries > MAX_WALK_ENTRIES) break;
          const info = await lstat(path.join(at, name)).catch(() => undefined);
          if (!info) continue;
          if (info.isDirectory()) {
            pending.push(`${dir}/${name}`);
            continue;
          }
          const inode = `${info.dev}:${info.ino}`;
          if (info.nlink > 1 && seen.has(inode)) continue;
          if (info.nlink > 1) seen.add(inode);
          bytes += info.blocks * 512;
        }
      })
      // a directory removed (or replaced) while walking is simply not counted
      .catch(() => undefined);
  }
  return bytes;
}
