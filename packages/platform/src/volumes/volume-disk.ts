import { chown, mkdir, rm, stat, statfs } from "node:fs/promises";
import path from "node:path";
import { command } from "../lib/command.js";
import { VOLUME_DEFAULT_OWNER } from "../model/volume.js";
import { ensureDiskImage } from "../rootfs/disk.js";
import { isMountPoint, unmount } from "../rootfs/mounts.js";

/**
 * A volume's files on this host: a sparse ext4 image of the volume's size, loop-mounted, so a
 * full volume is its writers' ENOSPC and never the host's. Two views of it:
 * - `data`, the directory sandboxes bind (symlinks work as anywhere);
 * - `content`, the same directory bound again with `nosymfollow`, where the content API works:
 *   the kernel then refuses to follow any symlink a sandbox planted, so no path the API is
 *   given can lead outside the volume, however the sandbox rearranges it meanwhile.
 */
export interface VolumeDisk {
  dir: string;
  image: string;
  /** Where the image is mounted. */
  fs: string;
  /** The volume's root inside the image (the image's own root also holds lost+found). */
  data: string;
  /** `data`, without symlink resolution. */
  content: string;
}

export function volumeDisk(dataDir: string, volumeId: string): VolumeDisk {
  const dir = path.join(dataDir, "volumes", volumeId);
  const fs = path.join(dir, "fs");
  return {
    dir,
    image: path.join(dir, "disk.img"),
    fs,
    data: path.join(fs, "data"),
    content: path.join(dir, "content"),
  };
}

/** Makes the volume's image (formatted once per size, copied sparse; see rootfs/disk.ts). */
export async function createVolumeDisk(disk: VolumeDisk, sizeMB: number, formatted: string): Promise<void> {
  await mkdir(disk.dir, { recursive: true });
  await ensureDiskImage({ image: disk.image, mountPoint: disk.fs }, sizeMB, formatted);
}

/** The loop device the image is attached to already (a sandbox still holds it after the platform restarted). */
async function attachedLoop(image: string): Promise<string | undefined> {
  const out = await command("losetup", ["--associated", image, "--noheadings", "--output", "NAME"]);
  return out
    .split("\n")
    .map((l) => l.trim())
    .find(Boolean);
}

/**
 * Mounts both views (a no-op for what is mounted). An image still attached to a loop device is
 * mounted from that device: a second device on the same file would be a second, diverging
 * ext4 of the same blocks.
 */
export async function mountVolumeDisk(disk: VolumeDisk): Promise<void> {
  if (!(await isMountPoint(disk.fs))) {
    await mkdir(disk.fs, { recursive: true });
    const loop = await attachedLoop(disk.image);
    const options = "noatime,nodev,nosuid";
    if (loop) await command("mount", ["-o", options, loop, disk.fs]);
    else await command("mount", ["-o", `loop,${options}`, disk.image, disk.fs]);
  }
  if (!(await stat(disk.data).catch(() => undefined))) {
    await mkdir(disk.data, { mode: 0o755 });
    await chown(disk.data, VOLUME_DEFAULT_OWNER.uid, VOLUME_DEFAULT_OWNER.gid);
  }
  if (!(await isMountPoint(disk.content))) {
    await mkdir(disk.content, { recursive: true });
    await command("mount", ["--bind", disk.data, disk.content]);
    await command("mount", ["-o", "remount,bind,nosymfollow,nodev,nosuid", disk.content]);
  }
}

export async function unmountVolumeDisk(disk: VolumeDisk): Promise<void> {
  await unmount(disk.content);
  await unmount(disk.fs);
}

/** Unmounts and deletes the volume's files. */
export async function removeVolumeDisk(disk: VolumeDisk): Promise<void> {
  await unmountVolumeDisk(disk);
  await rm(disk.dir, { recursive: true, force: true });
}

/** MB the volume's files take (its mounted filesystem's used blocks). */
export async function volumeUsedMB(disk: VolumeDisk): Promise<number> {
  const s = await statfs(disk.fs);
  return Math.ceil(((s.blocks - s.bfree) * s.bsize) / 2 ** 20);
}
