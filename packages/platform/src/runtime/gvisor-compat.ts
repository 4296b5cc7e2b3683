import type { Stats } from "node:fs";
import { chmod, mkdir, rm, unlink, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../lib/log.js";
import { TenantFileError, TenantTree } from "../lib/tenant-tree.js";
import { BOOT_ID_PATH, writeBootId } from "./boot-id.js";
import { AGENT_ENVD_DIR, type BindMount } from "./oci-spec.js";

/** The longest preload list of a template that is kept (glibc's own lists are a line or two). */
const MAX_PRELOAD_BYTES = 64 * 1024;

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
 *
 * The rootfs is the tenant's: it is read through a TenantTree (its links resolve inside it, a
 * FIFO or device is never opened), and `/tmp`, whose host path runsc binds as it finds it, is
 * made a plain directory first (see readyBindTargets).
 */
export async function gvisorCompat(
  bundleDir: string,
  rootfs: string,
  envdDir: string,
  log: Logger,
  /** Where the sandbox's volumes are bound. */
  volumePaths: readonly string[] = [],
): Promise<{ binds: BindMount[]; env: string[] }> {
  const bootId = await writeBootId(bundleDir);
  const { own, sudo } = await TenantTree.with(rootfs, async (tree) => ({
    own: await ownPreload(tree, log),
    sudo: tree.stat("/usr/bin/sudo")?.isFile() === true,
  }));
  await readyBindTargets(rootfs, volumePaths, log);
  const preload = path.join(bundleDir, "ld.so.preload");
  await writeFile(preload, `${path.join(AGENT_ENVD_DIR, "compat", "libx-gvisor-compat.so")}\n${own}`);
  const binds = [
    { source: preload, destination: "/etc/ld.so.preload", readonly: true },
    { source: path.join(rootfs, "tmp"), destination: "/tmp", readonly: false },
    { source: bootId, destination: BOOT_ID_PATH, readonly: true },
  ];
  if (sudo) {
    binds.push({ source: path.join(envdDir, "sudo.cjs"), destination: "/usr/bin/sudo", readonly: true });
  }
  return { binds, env: ["ENVD_SUDO=1"] };
}

/** The template's own preload list, when it is a regular file of a sensible size: else none. */
async function ownPreload(tree: TenantTree, log: Logger): Promise<string> {
  try {
    const content = await tree.readFile("/etc/ld.so.preload", { maxBytes: MAX_PRELOAD_BYTES });
    return content?.toString("utf8") ?? "";
  } catch (err) {
    if (!(err instanceof TenantFileError)) throw err;
    log.warn({ rootfs: tree.root, reason: err.message }, "the template's /etc/ld.so.preload is ignored");
    return "";
  }
}

/**
 * Makes the rootfs safe for runsc to bind over, before every start of its container (boot and
 * restore, when nothing of the sandbox runs that could change it):
 * - `/tmp`, whose host path runsc takes as a bind source and follows links in, must be a plain
 *   directory: a link there (from a COPY, an image, or root in a runc sandbox snapshotted and
 *   booted again under gVisor) would bind a host directory read-write;
 * - runsc's file server opens every bind's destination in the rootfs: a FIFO at
 *   `/etc/ld.so.preload` (or a volume's path) would stop the boot for good, so a destination
 *   that resolves to anything but what is bound there is replaced by an empty one.
 * What is replaced is the sandbox's own (its writable layer), and the log says so.
 */
export async function readyBindTargets(
  rootfs: string,
  volumePaths: readonly string[],
  log: Logger,
): Promise<void> {
  await TenantTree.with(rootfs, async (tree) => {
    await replaceUnless(tree, "/tmp", "dir", "refuse", log);
    await replaceUnless(tree, "/etc/ld.so.preload", "file", "inside", log);
    await replaceUnless(tree, "/usr/bin/sudo", "file", "inside", log);
    for (const p of volumePaths) await replaceUnless(tree, p, "dir", "inside", log);
  });
}

/**
 * Leaves `p` as it is when it is absent or (links followed as `links` says) a `kind`; else puts
 * an empty `kind` in the place of the entry itself (a link is replaced, never followed).
 */
async function replaceUnless(
  tree: TenantTree,
  p: string,
  kind: "file" | "dir",
  links: "refuse" | "inside",
  log: Logger,
): Promise<void> {
  let entry: Stats | undefined;
  let target: Stats | undefined;
  try {
    entry = tree.lstat(p, links);
    target = links === "inside" && entry?.isSymbolicLink() ? tree.stat(p) : entry;
  } catch (err) {
    // a link on the way under "refuse", or a path that leaves the tree: runsc gets no say on it
    if (!(err instanceof TenantFileError)) throw err;
    log.warn({ rootfs: tree.root, path: p, reason: err.message }, "cannot prepare a bind's destination");
    throw new TenantFileError(`the sandbox's ${p} cannot be bound over: ${err.message}`);
  }
  if (!entry) return;
  if (target && (kind === "dir" ? target.isDirectory() : target.isFile())) return;
  if (links === "inside" && entry.isSymbolicLink() && !target) return; // dangling: runsc makes it
  log.warn(
    { rootfs: tree.root, path: p, kind },
    "a bind's destination in the rootfs was not what is bound there: replaced",
  );
  await tree.withDir(path.posix.dirname(p), { links: "refuse" }, async (dir) => {
    const at = path.join(dir, path.posix.basename(p));
    if (entry.isDirectory()) await rm(at, { recursive: true, force: true });
    else await unlink(at);
    if (kind === "dir") {
      await mkdir(at, { mode: p === "/tmp" ? 0o1777 : 0o755 });
      if (p === "/tmp") await chmod(at, 0o1777);
    } else {
      await writeFile(at, "", { flag: "wx", mode: 0o644 });
    }
  });
}
