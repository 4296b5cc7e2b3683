import { constants } from "node:fs";
import { open } from "node:fs/promises";
import path from "node:path";
import { TenantFileError, TenantTree } from "../lib/tenant-tree.js";

/** Where the platform's egress CA is put in every sandbox, alone and in the system bundle. */
export const SANDBOX_CA_FILE = "/usr/local/share/ca-certificates/x-egress-ca.crt";
export const SANDBOX_CA_BUNDLE = "/etc/ssl/certs/ca-certificates.crt";

/**
 * The environment that makes curl, Python (requests, ssl) and Node trust the bundle with the
 * egress CA: Node ignores the system store and takes extra CAs from NODE_EXTRA_CA_CERTS.
 */
export const TRUSTED_CA_ENV: Readonly<Record<string, string>> = {
  NODE_EXTRA_CA_CERTS: SANDBOX_CA_FILE,
  REQUESTS_CA_BUNDLE: SANDBOX_CA_BUNDLE,
  SSL_CERT_FILE: SANDBOX_CA_BUNDLE,
  CURL_CA_BUNDLE: SANDBOX_CA_BUNDLE,
};

/** The largest CA bundle read from a sandbox (Debian's is about 220 KB). */
const MAX_BUNDLE = 4 * 2 ** 20;

/**
 * Puts the egress CA (its certificate, never its key) into the trust of a sandbox that is not
 * running, through its writable layer: at SANDBOX_CA_FILE (where `update-ca-certificates`
 * finds it again when it rebuilds the bundle inside) and appended to SANDBOX_CA_BUNDLE unless
 * it is there already. The sandbox's files are its own to shape, so nothing is followed: a
 * directory on the way or a file that is a link, a device or anything but a regular file
 * leaves that place as it is. Idempotent: a sandbox booted again is not written to.
 */
export async function trustEgressCa(rootfs: string, caPem: string): Promise<void> {
  const ca = caPem.endsWith("\n") ? caPem : `${caPem}\n`;
  await TenantTree.with(rootfs, async (tree) => {
    if ((await readRegular(tree, SANDBOX_CA_FILE)) !== ca) await writeRegular(tree, SANDBOX_CA_FILE, ca);
    const own = await readRegular(tree, SANDBOX_CA_BUNDLE);
    if (own === null || own.includes(ca.trim())) return;
    await writeRegular(tree, SANDBOX_CA_BUNDLE, `${own && !own.endsWith("\n") ? `${own}\n` : own}${ca}`);
  });
}

/** A file's text: "" when absent, null when it is not a regular file (or too large to be a bundle). */
async function readRegular(tree: TenantTree, file: string): Promise<string | null> {
  try {
    return (await tree.readFile(file, { links: "refuse", maxBytes: MAX_BUNDLE }))?.toString("utf8") ?? "";
  } catch (err) {
    if (err instanceof TenantFileError) return null;
    throw err;
  }
}

/**
 * Writes a regular file (made 0644 when absent, its directories 0755); a file of another kind,
 * or a directory on the way that is not a plain directory, is left as it is.
 */
async function writeRegular(tree: TenantTree, file: string, text: string): Promise<void> {
  try {
    const existing = tree.lstat(file, "refuse");
    if (existing && !existing.isFile()) return;
    await tree.withDir(path.dirname(file), { links: "refuse", create: 0o755 }, async (dir) => {
      const flags =
        constants.O_WRONLY |
        constants.O_CREAT |
        constants.O_TRUNC |
        constants.O_NOFOLLOW |
        constants.O_NONBLOCK;
      const handle = await open(path.join(dir, path.basename(file)), flags, 0o644).catch(
        (err: NodeJS.ErrnoException) => {
          // a link, directory or FIFO in its place since: not ours to replace
          if (err.code === "ELOOP" || err.code === "EISDIR" || err.code === "ENXIO") return undefined;
          throw err;
        },
      );
      if (!handle) return;
      try {
        if ((await handle.stat()).isFile()) await handle.writeFile(text);
      } finally {
        await handle.close();
      }
    });
  } catch (err) {
    if (!(err instanceof TenantFileError)) throw err;
  }
}
