import { readFile } from "node:fs/promises";
import { resolve } from "node:path";
import { CommandError, command } from "../lib/command.js";

export interface MountEntry {
  /** Absolute mount point. */
  point: string;
  /** Filesystem type, e.g. `overlay`, `ext4`. */
  fsType: string;
}

/** This process's mount table (`/proc/self/mountinfo`). */
export async function readMounts(): Promise<MountEntry[]> {
  const text = await readFile("/proc/self/mountinfo", "utf8");
  const mounts: MountEntry[] = [];
  for (const line of text.split("\n")) {
    const [left, right] = line.split(" - ");
    if (!left || !right) continue;
    mounts.push({ point: unescapeMount(left.split(" ")[4] ?? ""), fsType: right.split(" ")[0] ?? "" });
  }
  return mounts;
}

/** mountinfo escapes space, tab, newline and backslash as octal. */
function unescapeMount(s: string): string {
  return s.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8)));
}

export async function isMountPoint(point: string): Promise<boolean> {
  const target = resolve(point);
  return (await readMounts()).some((m) => m.point === target);
}

/**
 * Unmounts `point`; not mounted is fine. While it is busy (a process that has not exited yet,
 * e.g. a gVisor gofer, still holds it) it retries, then detaches lazily: the kernel frees it
 * when the last user goes.
 */
export async function unmount(point: string): Promise<void> {
  const target = resolve(point);
  for (let attempt = 0; await isMountPoint(target); attempt++) {
    try {
      await command("umount", [target]);
    } catch (err) {
      if (!(err instanceof CommandError) || !/busy/i.test(err.stderr)) throw err;
      if (attempt >= 10) {
        await command("umount", ["--lazy", target]);
        return;
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }
}
