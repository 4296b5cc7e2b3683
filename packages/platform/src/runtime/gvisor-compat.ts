import { readFile, stat, writeFile } from "node:fs/promises";
import path from "node:path";
import { BOOT_ID_PATH, writeBootId } from "./boot-id.js";
import { AGENT_ENVD_DIR, type BindMount } from "./oci-spec.js";

/**
 * What a sandbox under gVisor gets bound over its template so that users notice no difference
 * from runc, written into its bundle:
 * - bookworm's release rejects a statx() flag that `ls -l` uses, and every release so far a
 *   close_range() up to ~0U that GLib makes before every spawn (XFCE could start nothing):
 *   preloaded shims from envd's bundle get round both (the template's own preload list is kept);
 * - runsc puts a tmpfs on /tmp unless the spec mounts something there: the template's /tmp is
 *   bound instead, so writes land in the sandbox's own layer as under runc;
 * - its boot id (see boot-id.ts) is bound where Linux shows it;
 * - setuid cannot work (gVisor runs everything with no_new_privs), so the template's sudo is
 *   replaced by envd's stand-in, which asks envd (root) to run the command (ENVD_SUDO=1).
 */
export async function gvisorCompat(
  bundleDir: string,
  rootfs: string,
  envdDir: string,
): Promise<{ binds: BindMount[]; env: string[] }> {
  const bootId = await writeBootId(bundleDir);
  const own = await readFile(path.join(rootfs, "etc", "ld.so.preload"), "utf8").catch(() => "");
  const preload = path.join(bundleDir, "ld.so.preload");
  await writeFile(preload, `${path.join(AGENT_ENVD_DIR, "compat", "libx-gvisor-compat.so")}\n${own}`);
  const binds = [
    { source: preload, destination: "/etc/ld.so.preload", readonly: true },
    { source: path.join(rootfs, "tmp"), destination: "/tmp", readonly: false },
    { source: bootId, destination: BOOT_ID_PATH, readonly: true },
  ];
  const sudo = await stat(path.join(rootfs, "usr", "bin", "sudo")).catch(() => undefined);
  if (sudo?.isFile()) {
    binds.push({ source: path.join(envdDir, "sudo.cjs"), destination: "/usr/bin/sudo", readonly: true });
  }
  return { binds, env: ["ENVD_SUDO=1"] };
}
