import { mkdir, mkdtemp, rename, rm, rmdir, stat, statfs, truncate, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { command } from "../lib/command.js";
import { isMountPoint, unmount } from "./mounts.js";

/**
 * A sandbox's own disk: a sparse ext4 image, loop-mounted, that holds the overlay's upper and
 * work directories. Its size caps what the sandbox can write, so a full disk is the sandbox's
 * ENOSPC (envd's 507), never the host's. Sparse: it occupies only what was written.
 * Measured here: create + format 21 ms, mount 12 ms, unmount 5 ms.
 */
export interface SandboxDisk {
  /** The image file. */
  image: string;
  /** Where the image is mounted. */
  mountPoint: string;
}

/** Formats a sparse ext4 image of `sizeMB` at `file` (renamed into place only once formatted). */
async function formatImage(file: string, sizeMB: number): Promise<void> {
  const staging = `${file}.new-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await truncate(staging, sizeMB * 1024 * 1024).catch(async (err: NodeJS.ErrnoException) => {
      if (err.code !== "ENOENT") throw err;
      await writeFile(staging, "");
      await truncate(staging, sizeMB * 1024 * 1024);
    });
    // -m 0: the sandbox gets all of it; lazy init: formatting writes ~1 MB, not the whole table
    await command("mkfs.ext4", [
      "-q",
      "-F",
      "-m",
      "0",
      "-E",
      "lazy_itable_init=1,lazy_journal_init=1",
      staging,
    ]);
    await rename(staging, file);
  } catch (err) {
    await rm(staging, { force: true });
    throw err;
  }
}

/**
 * Creates the image of `sizeMB` unless it exists (a stopped sandbox boots again from it): a
 * copy of a freshly formatted image of that size kept in `templates` (formatted once), which
 * costs one `cp` of its few written blocks instead of a `mkfs` each time.
 */
export async function ensureDiskImage(disk: SandboxDisk, sizeMB: number, templates: string): Promise<void> {
  if (await stat(disk.image).catch(() => undefined)) return;
  const template = await formattedImage(sizeMB, templates);
  const staging = `${disk.image}.new`;
  // sparse: only the blocks mkfs wrote are copied (coreutils skips holes)
  await command("cp", ["--sparse=always", template, staging]);
  // renamed into place only once complete: an image that exists is usable
  await rename(staging, disk.image);
}

/** The freshly formatted image of `sizeMB` kept in `templates`, made on first need. */
async function formattedImage(sizeMB: number, templates: string): Promise<string> {
  if (!Number.isInteger(sizeMB) || sizeMB < 16) throw new Error(`disk size must be ≥ 16 MB, got ${sizeMB}`);
  const template = join(templates, `ext4-${sizeMB}m.img`);
  if (!(await stat(template).catch(() => undefined))) {
    await mkdir(templates, { recursive: true });
    await formatImage(template, sizeMB);
  }
  return template;
}

/**
 * What a sandbox's own boot writes to its disk at most: its console log (4 MiB kept), the
 * egress CA and the CA bundle it is appended to (copied up), the overlay's work directory.
 */
export const DISK_BOOT_RESERVE_MB = 16;

const freeSpace = new Map<string, Promise<number>>();

/**
 * Free space (MiB) a sandbox's fresh disk of `sizeMB` leaves its writers, its boot's writes
 * taken off (DISK_BOOT_RESERVE_MB): the formatted image mounted read-only and asked, as `df`
 * in the sandbox asks its overlay (whose free space is its disk's). ext4 keeps its journal,
 * inode tables and a reserve for delayed allocation (2% or 16 MiB) off it. Measured once per
 * size (tens of ms) and kept.
 */
export function diskFreeSpaceMB(sizeMB: number, templates: string): Promise<number> {
  const key = join(resolve(templates), String(sizeMB));
  let measured = freeSpace.get(key);
  if (!measured) {
    measured = measureFree(sizeMB, templates);
    freeSpace.set(key, measured);
    measured.catch(() => freeSpace.delete(key));
  }
  return measured;
}

async function measureFree(sizeMB: number, templates: string): Promise<number> {
  const image = await formattedImage(sizeMB, templates);
  const at = await mkdtemp(join(templates, ".measure-"));
  try {
    // read-only and without the journal: nothing of the kept image changes
    await command("mount", ["-o", "loop,ro,noload,nosuid,nodev,noexec", image, at]);
    try {
      const fs = await statfs(at);
      return Math.floor((fs.bavail * fs.bsize) / 2 ** 20) - DISK_BOOT_RESERVE_MB;
    } finally {
      await unmount(at);
    }
  } finally {
    await rmdir(at).catch(() => undefined);
  }
}

/** Mounts the image (a no-op when it is mounted already). */
export async function mountDisk(disk: SandboxDisk): Promise<void> {
  if (await isMountPoint(disk.mountPoint)) return;
  await mkdir(disk.mountPoint, { recursive: true });
  // the loop device is set to auto-clear: it goes with the unmount. nosuid,nodev: what a sandbox
  // writes is nothing on the host (the overlay on top decides what the sandbox itself may do)
  await command("mount", ["-o", "loop,noatime,nosuid,nodev", disk.image, resolve(disk.mountPoint)]);
}

/** Unmounts the image; not mounted is fine. */
export async function unmountDisk(disk: SandboxDisk): Promise<void> {
  await unmount(disk.mountPoint);
}
