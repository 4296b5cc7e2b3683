import { mkdir, mkdtemp } from "node:fs/promises";
import { join } from "node:path";
import { type BuiltImage, ensureBaseImage } from "../../../src/rootfs/base-image.js";

/**
 * Kept between runs so the base image (about 2 minutes to build) is built once per machine;
 * the same directory the platform's other tests (and their global setup) use.
 */
export const DATA_DIR = process.env.X_TEST_DATA_DIR ?? "/var/tmp/x-test-data";

/** The base template's root filesystem, built on first use; build progress goes to the test log. */
export async function baseImage(): Promise<BuiltImage> {
  let phase = "";
  return ensureBaseImage({
    dataDir: DATA_DIR,
    onProgress: (p) => {
      if (p.phase !== phase || p.phase === "finalize") console.log(`base image: ${p.phase}: ${p.line}`);
      phase = p.phase;
    },
  });
}

/** A fresh directory for one test file's sandboxes and runtime state. */
export async function runDir(name: string): Promise<string> {
  await mkdir(join(DATA_DIR, "runs"), { recursive: true });
  return mkdtemp(join(DATA_DIR, "runs", `${name}-`));
}

/** Short unique ids: they end up in netns names and cgroup paths. */
export function uniqueId(tag: string): string {
  return `${tag}-${Date.now().toString(36)}${Math.floor(Math.random() * 1296).toString(36)}`;
}
