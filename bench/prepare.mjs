// What the bench needs once per machine, made before its clock starts. On a fresh machine there
// is no base image and no shipped template yet: every platform the bench opens would build its
// own base image (about a minute each, six platforms) and the first shipped phase would build the
// templates (over two minutes), all inside the budget, leaving the later phases nothing (seen on a
// fresh host: 8 of the 15 minutes went to builds and most figures were skipped).
import { existsSync, mkdirSync, readdirSync, renameSync } from "node:fs";
import path from "node:path";
import { log } from "./lib.mjs";
import { closePlatform, openPlatform } from "./platform.mjs";
import { installShippedTemplates, SHIPPED_DATA_DIR } from "./scenarios/shipped.mjs";

const isBase = (name) => name.startsWith("base-");
const hasBase = (imagesDir) => existsSync(imagesDir) && readdirSync(imagesDir).some(isBase);

/**
 * Builds the base image into `cachedImages` (the directory the tests build theirs into, which
 * each bench data directory hard-links) when it has none: a platform started on a scratch data
 * directory builds it, and it is moved over (same filesystem) once complete.
 */
async function ensureBaseImage(cachedImages, scratch) {
  if (hasBase(cachedImages)) return false;
  log(`no base image in ${cachedImages}: building it first (outside the budget)`);
  const dataDir = path.join(scratch, "prepare-base");
  const ctx = await openPlatform(dataDir, { warmPoolSize: 0 });
  await closePlatform(ctx);
  mkdirSync(cachedImages, { recursive: true });
  for (const name of readdirSync(path.join(dataDir, "images")).filter(isBase)) {
    const target = path.join(cachedImages, name);
    if (!existsSync(target)) renameSync(path.join(dataDir, "images", name), target);
  }
  return true;
}

/**
 * Makes the one-time builds the bench's figures must not include: the base image, and, when the
 * shipped templates are measured, those templates (under runc, where they build fastest; found
 * installed in seconds on a later run). Resolves with whether it did any work.
 */
export async function prepareOnce({ cachedImages, scratch, shipped }) {
  const built = await ensureBaseImage(cachedImages, scratch);
  if (!shipped) return built;
  log(`installing the shipped templates into ${SHIPPED_DATA_DIR} (outside the budget)`);
  await installShippedTemplates("runc", cachedImages);
  return true;
}
