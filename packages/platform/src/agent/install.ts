import { createHash } from "node:crypto";
import { cp, mkdir, readdir, readFile, rename, rm, stat } from "node:fs/promises";
import path from "node:path";

async function filesUnder(dir: string, prefix = ""): Promise<string[]> {
  const out: string[] = [];
  for (const entry of await readdir(path.join(dir, prefix), { withFileTypes: true })) {
    const rel = path.join(prefix, entry.name);
    if (entry.isDirectory()) out.push(...(await filesUnder(dir, rel)));
    else if (entry.isFile() && !entry.name.endsWith(".map")) out.push(rel);
  }
  return out.sort();
}

/**
 * Copies the envd bundle into the data directory under its content hash and returns that
 * directory. Sandboxes bind-mount the copy, so rebuilding envd never changes the files under
 * a running (or checkpointed) sandbox, and a new build reaches new sandboxes on restart.
 */
export async function installEnvd(bundleDir: string, dataDir: string): Promise<string> {
  const files = await filesUnder(bundleDir).catch(() => {
    throw new Error(`envd bundle not found at ${bundleDir}: build it with 'pnpm build'`);
  });
  if (!files.includes("envd.cjs"))
    throw new Error(`${bundleDir} has no envd.cjs: build it with 'pnpm build'`);
  const hash = createHash("sha256");
  for (const file of files)
    hash
      .update(file)
      .update("\0")
      .update(await readFile(path.join(bundleDir, file)));
  const target = path.join(dataDir, "envd", hash.digest("hex").slice(0, 16));
  if (
    await stat(target).then(
      () => true,
      () => false,
    )
  )
    return target;
  const staging = `${target}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(path.dirname(target), { recursive: true });
  await cp(bundleDir, staging, { recursive: true, filter: (src) => !src.endsWith(".map") });
  await rename(staging, target).catch(async (err: NodeJS.ErrnoException) => {
    // Another platform process installed the same bundle first: theirs is identical.
    await rm(staging, { recursive: true, force: true });
    if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
  });
  return target;
}
