import { constants } from "node:fs";
import { lstat, mkdir, open } from "node:fs/promises";
import path from "node:path";

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
  const single = await inside(rootfs, SANDBOX_CA_FILE);
  if (single && (await readRegular(single)) !== ca) await writeRegular(single, ca);
  const bundle = await inside(rootfs, SANDBOX_CA_BUNDLE);
  if (!bundle) return;
  const own = await readRegular(bundle);
  if (own === null || own.includes(ca.trim())) return;
  await writeRegular(bundle, `${own && !own.endsWith("\n") ? `${own}\n` : own}${ca}`);
}

/**
 * The host path of a file of the root filesystem, its directories made (0755) where missing;
 * undefined when one of them is not a plain directory (a link, say).
 */
async function inside(rootfs: string, file: string): Promise<string | undefined> {
  let at = rootfs;
  for (const part of path.dirname(file).split("/").filter(Boolean)) {
    at = path.join(at, part);
    const stat = await lstat(at).catch(() => undefined);
    if (!stat) await mkdir(at, { mode: 0o755 });
    else if (!stat.isDirectory()) return undefined;
  }
  return path.join(at, path.basename(file));
}

/** A file's text: "" when absent, null when it is not a regular file (or too large to be a bundle). */
async function readRegular(file: string): Promise<string | null> {
  const stat = await lstat(file).catch(() => undefined);
  if (!stat) return "";
  if (!stat.isFile() || stat.size > MAX_BUNDLE) return null;
  const handle = await open(file, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    return (await handle.stat()).isFile() ? await handle.readFile("utf8") : null;
  } finally {
    await handle.close();
  }
}

/** Writes a regular file (made 0644 when absent); a file of another kind is left as it is. */
async function writeRegular(file: string, text: string): Promise<void> {
  const stat = await lstat(file).catch(() => undefined);
  if (stat && !stat.isFile()) return;
  const flags =
    constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK;
  const handle = await open(file, flags, 0o644);
  try {
    if ((await handle.stat()).isFile()) await handle.writeFile(text);
  } finally {
    await handle.close();
  }
}
