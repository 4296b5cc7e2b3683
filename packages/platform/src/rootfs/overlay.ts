import { mkdir } from "node:fs/promises";
import { dirname, relative, resolve, sep } from "node:path";
import { command } from "../lib/command.js";
import { readMounts, unmount } from "./mounts.js";

export interface OverlayOptions {
  /** Read-only layers, topmost first (overlayfs lowerdir order). */
  lowers: string[];
  /** The sandbox's own writable layer; created if missing. */
  upperDir: string;
  /** overlayfs scratch space; same filesystem as upperDir; created if missing. */
  workDir: string;
  /** Where the merged root filesystem appears; created if missing. */
  target: string;
  /**
   * Set-id bits take effect on the mount (a runc sandbox's root, whose `sudo` needs them). Off
   * otherwise: what a tenant made set-id root must not be root for anyone on the host.
   */
  suid?: boolean;
}

/** mount(2) takes at most one page of options; past that, lower paths go relative to a shared parent. */
const MAX_MOUNT_DATA = 4000;

export async function mountOverlay(o: OverlayOptions): Promise<void> {
  if (o.lowers.length === 0) throw new Error("an overlay needs at least one lower layer");
  await Promise.all([o.upperDir, o.workDir, o.target].map((d) => mkdir(d, { recursive: true })));
  const lowers = o.lowers.map((l) => resolve(l));
  for (const p of [...lowers, o.upperDir, o.workDir]) {
    // overlayfs separates layers with ':' and options with ','
    if (/[:,]/.test(p)) throw new Error(`overlay paths may not contain ':' or ',': ${p}`);
  }
  // nodev always: a device node a tenant made is never a device on the host
  const flags = o.suid ? "nodev" : "nodev,nosuid";
  const opts = (lowerdir: string) =>
    `${flags},lowerdir=${lowerdir},upperdir=${resolve(o.upperDir)},workdir=${resolve(o.workDir)}`;
  let data = opts(lowers.join(":"));
  let cwd: string | undefined;
  if (data.length > MAX_MOUNT_DATA) {
    cwd = commonParent(lowers);
    data = opts(lowers.map((l) => relative(cwd!, l)).join(":"));
    if (data.length > MAX_MOUNT_DATA)
      throw new Error(`too many layers for one overlay mount (${lowers.length})`);
  }
  await command("mount", ["-t", "overlay", "overlay", "-o", data, resolve(o.target)], { cwd });
}

/** Unmounts `target`; not mounted is fine. */
export async function unmountOverlay(target: string): Promise<void> {
  if (await isOverlayMounted(target)) await unmount(target);
}

/** Overlay mount points currently mounted at or below `under`. */
export async function overlayMounts(under = "/"): Promise<string[]> {
  const base = resolve(under);
  return (await readMounts())
    .filter((m) => m.fsType === "overlay")
    .map((m) => m.point)
    .filter((point) => point === base || point.startsWith(base === sep ? base : base + sep));
}

export async function isOverlayMounted(target: string): Promise<boolean> {
  const path = resolve(target);
  return (await overlayMounts(path)).includes(path);
}

function commonParent(paths: string[]): string {
  let parent = dirname(paths[0]!);
  while (parent !== sep && !paths.every((p) => p.startsWith(parent + sep))) parent = dirname(parent);
  return parent;
}
