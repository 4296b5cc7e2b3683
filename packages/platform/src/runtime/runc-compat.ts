import path from "node:path";
import { BOOT_ID_PATH, writeBootId } from "./boot-id.js";
import type { OciHook } from "./oci-spec.js";

/**
 * What a sandbox under runc gets beyond the common spec: its own boot id over the host's.
 * runc refuses spec mounts inside /proc, so a createContainer hook binds it: runc runs those
 * in the container's new mount namespace before pivot_root, where the host's paths are still
 * visible; the mount is read-only and the sandbox, without CAP_SYS_ADMIN, cannot undo it.
 * The hook runs as the sandbox's root (in its user namespace): the boot id is written into
 * `dir`, which that root can reach (the sandbox's runc view, see runc-userns.ts).
 */
export async function runcCompat(dir: string, rootfs: string): Promise<{ hooks: OciHook[] }> {
  const bootId = await writeBootId(dir);
  const target = path.join(rootfs, BOOT_ID_PATH);
  return {
    hooks: [
      {
        path: "/bin/sh",
        args: ["sh", "-c", 'mount --bind "$0" "$1" && mount -o remount,bind,ro "$1"', bootId, target],
      },
    ],
  };
}
