import { createHash, randomBytes } from "node:crypto";
import { access, lstat, mkdir, readdir, rename, rm, unlink } from "node:fs/promises";
import path from "node:path";
import { command } from "../lib/command.js";
import { noSpace } from "../model/errors.js";
import { mountOverlay, unmountOverlay } from "../rootfs/overlay.js";
import { RootfsView } from "./rootfs-view.js";

const LAYERS = "layers";

/** Whether a write failed for want of room: ENOSPC, or GNU tar's short write on a full disk. */
function outOfSpace(err: unknown): boolean {
  return (
    (err as NodeJS.ErrnoException | undefined)?.code === "ENOSPC" ||
    /No space left on device|Wrote only \d+ of \d+ bytes/.test(String(err))
  );
}

/**
 * Removes the device nodes in a directory about to become a layer (an image's, or ones root made
 * in a sandbox), keeping overlay whiteouts (character devices 0/0, which are how a deletion
 * looks in an upper directory). A sandbox's /dev is its runtime's own, so a device in a layer
 * serves nobody inside, and on the host it would be a device of the host. Returns their paths.
 */
export async function dropDeviceNodes(dir: string): Promise<string[]> {
  const found = await command("find", [dir, "-xdev", "(", "-type", "b", "-o", "-type", "c", ")", "-print0"]);
  const dropped: string[] = [];
  for (const file of found.split("\0").filter(Boolean)) {
    const info = await lstat(file).catch(() => undefined);
    if (!info || (info.isCharacterDevice() && info.rdev === 0)) continue;
    await unlink(file);
    dropped.push(path.relative(dir, file));
  }
  return dropped;
}

/**
 * Template layers: directories under `<dataDir>/layers`, stacked read-only (topmost first) as
 * the lower layers of sandbox overlays. A build step's layer is named by its cache key, so an
 * unchanged step finds its layer and does no work; a snapshot's layer has a random name. Layers
 * are written in a staging directory and renamed into place, so a layer that exists is complete.
 * Overlay whiteouts (0/0 character devices) and opaque-directory xattrs in a layer are kept:
 * they are what a deletion in an upper directory looks like, and stay valid as lower layers.
 */
export class LayerStore {
  constructor(
    private readonly dataDir: string,
    /**
     * Which platform names its own scratch and snapshot layers (its network prefix): several
     * platforms may share a data directory (tests do), so each sweeps only what it made.
     */
    private readonly owner = "x",
    /** Told of every layer committed (beyond one machine: its digest goes into the catalog). */
    private readonly onCommit?: (rel: string) => Promise<void>,
  ) {}

  /** A name of this platform's own for a one-off layer: `snap-<owner>-<id>`. */
  ownName(kind: "snap" | "mem", id: string): string {
    return `${kind}-${this.owner}-${id}`;
  }

  /** Cache key of a step: the parent's key and everything that decides the step's result. */
  static key(parentKey: string, ...parts: string[]): string {
    const hash = createHash("sha256").update(parentKey);
    for (const part of parts) hash.update("\0").update(part);
    return hash.digest("hex").slice(0, 32);
  }

  /** Layer paths are stored relative to the data directory (`layers/<name>`). */
  rel(name: string): string {
    return `${LAYERS}/${name}`;
  }

  abs(rel: string): string {
    return path.resolve(this.dataDir, rel);
  }

  async has(name: string): Promise<boolean> {
    return access(this.abs(this.rel(name))).then(
      () => true,
      () => false,
    );
  }

  /** A fresh scratch directory on the layers' filesystem (renames into place stay atomic). */
  async staging(): Promise<string> {
    const dir = path.join(this.dataDir, LAYERS, `.staging-${this.owner}-${randomBytes(8).toString("hex")}`);
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return dir;
  }

  /**
   * Moves a finished directory into place as layer `name`. When another build committed the
   * same key meanwhile, theirs is kept (same inputs, same result). From another filesystem (the
   * layers on a disk of their own) it is copied in, and the original removed.
   */
  async commit(dir: string, name: string): Promise<string> {
    await dropDeviceNodes(dir);
    const rel = this.rel(name);
    await mkdir(path.dirname(this.abs(rel)), { recursive: true });
    try {
      await rename(dir, this.abs(rel));
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "EXDEV") {
        await this.copyIn(dir, name);
      } else if (code !== "ENOTEMPTY" && code !== "EEXIST") {
        throw err;
      }
      await rm(dir, { recursive: true, force: true });
    }
    await this.onCommit?.(rel);
    return rel;
  }

  /** An empty layer `name`: the cache entry of a step that turned out to change no files. */
  async empty(name: string): Promise<string> {
    const staging = await this.staging();
    return this.commit(staging, name);
  }

  /** A copy of `source` (a sandbox's writable layer) as layer `name`: attributes, xattrs and whiteouts kept. */
  async copyIn(source: string, name: string): Promise<string> {
    const staging = await this.staging();
    const target = path.join(staging, "layer");
    try {
      await command("cp", ["-a", "--reflink=auto", "--", source, target], { timeoutMs: 30 * 60_000 });
      return await this.commit(target, name);
    } catch (err) {
      if (outOfSpace(err)) {
        throw noSpace(
          `the platform's disk is full: no room for a copy of ${path.basename(source)} (layer ${name})`,
        );
      }
      throw err;
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * Runs `fn` on a host-side overlay of `lowers` with a fresh upper directory and returns that
   * upper directory's contents as layer `name`: whatever `fn` changes through the view lands in
   * the new layer, with the kernel's copy-up giving parent directories their original attributes.
   */
  async writeThrough(
    lowers: string[],
    name: string,
    fn: (view: RootfsView) => Promise<void>,
  ): Promise<string> {
    const staging = await this.staging();
    const upper = path.join(staging, "upper");
    const merged = path.join(staging, "merged");
    try {
      await mountOverlay({
        lowers: lowers.map((l) => this.abs(l)),
        upperDir: upper,
        workDir: path.join(staging, "work"),
        target: merged,
      });
      try {
        await fn(new RootfsView(merged));
      } catch (err) {
        if (outOfSpace(err)) throw noSpace(`the platform's disk is full: no room for layer ${name}`);
        throw err;
      } finally {
        await unmountOverlay(merged);
      }
      return await this.commit(upper, name);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /** Runs `fn` on a view of `lowers` for lookups (accounts, paths); changes made through it are discarded. */
  async inspect<T>(lowers: string[], fn: (view: RootfsView) => Promise<T>): Promise<T> {
    const staging = await this.staging();
    const merged = path.join(staging, "merged");
    try {
      await mountOverlay({
        lowers: lowers.map((l) => this.abs(l)),
        upperDir: path.join(staging, "upper"),
        workDir: path.join(staging, "work"),
        target: merged,
      });
      try {
        return await fn(new RootfsView(merged));
      } finally {
        await unmountOverlay(merged);
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * After a restart: this platform's snapshot layers that no build references (a snapshot cut
   * short after copying its files) and its staging directories (copies cut short) go. Build
   * step layers are a cache keyed by content and stay.
   */
  async sweepOrphans(referenced: ReadonlySet<string>): Promise<string[]> {
    const names = await readdir(path.join(this.dataDir, LAYERS)).catch(() => [] as string[]);
    const own = [`.staging-${this.owner}-`, this.ownName("snap", ""), this.ownName("mem", "")];
    const orphans = names
      .filter((n) => own.some((prefix) => n.startsWith(prefix)))
      .map((n) => this.rel(n))
      .filter((rel) => !referenced.has(rel));
    await this.remove(orphans);
    return orphans;
  }

  /** Removes layers (paths as stored in builds); only ones under `layers/`. */
  async remove(rels: Iterable<string>): Promise<void> {
    for (const rel of rels) {
      if (!rel.startsWith(`${LAYERS}/`) || rel.includes("..")) continue;
      await rm(this.abs(rel), { recursive: true, force: true });
    }
  }
}
