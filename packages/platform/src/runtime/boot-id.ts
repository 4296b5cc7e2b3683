import { randomUUID } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

/** Where a sandbox's boot id is shown, as on any Linux machine. */
export const BOOT_ID_PATH = "/proc/sys/kernel/random/boot_id";

/**
 * A sandbox has a boot id of its own, new at every boot (a cold boot after a files-only pause
 * shows a new one, a memory restore keeps running with the one it had): gVisor's /proc has no
 * kernel/random at all, and runc's would show the host's, the same in every sandbox and a
 * fingerprint of the host. Written into the bundle; each runtime shows it its own way.
 */
export async function writeBootId(bundleDir: string): Promise<string> {
  await mkdir(bundleDir, { recursive: true });
  const file = path.join(bundleDir, "boot_id");
  await writeFile(file, `${randomUUID()}\n`);
  return file;
}
