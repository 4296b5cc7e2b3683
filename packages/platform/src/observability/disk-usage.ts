import { lstat, readdir } from "node:fs/promises";
import path from "node:path";

/**
 * Bytes a directory tree occupies on disk (`du -s`): allocated blocks, hard links counted
 * once, symlinks not followed. Entries that vanish while walking are skipped.
 */
export async function diskUsage(root: string): Promise<number> {
  const seen = new Set<string>();
  const pending = [root];
  let bytes = 0;
  while (pending.length > 0) {
    const dir = pending.pop()!;
    const stat = await lstat(dir).catch(() => undefined);
    if (!stat) continue;
    if (!stat.isDirectory()) {
      const inode = `${stat.dev}:${stat.ino}`;
      if (stat.nlink > 1 && seen.has(inode)) continue;
      if (stat.nlink > 1) seen.add(inode);
      bytes += stat.blocks * 512;
      continue;
    }
    bytes += stat.blocks * 512;
    const names = await readdir(dir).catch(() => [] as string[]);
    for (const name of names) pending.push(path.join(dir, name));
  }
  return bytes;
}
