import { constants } from "node:fs";
import { lstat, mkdir, open, writeFile } from "node:fs/promises";
import path from "node:path";
import type { BindMount } from "../runtime/oci-spec.js";

/** Where the platform's egress CA appears in every sandbox, alone and in the system bundle. */
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

/** The largest CA bundle read from a template (Debian's is about 220 KB). */
const MAX_BUNDLE = 4 * 2 ** 20;

/**
 * Files in the sandbox's bundle directory, bound read-only over the template's, that put the
 * egress CA (certificate only, never its key) into the sandbox's trust: the template's own
 * bundle with the CA appended at SANDBOX_CA_BUNDLE, and the CA alone at SANDBOX_CA_FILE. Made
 * afresh at each boot from the sandbox's root filesystem, which is read without following a
 * link (a sandbox's files must not make the host read its own).
 */
export async function trustedCaBinds(bundleDir: string, rootfs: string, caPem: string): Promise<BindMount[]> {
  const ca = caPem.endsWith("\n") ? caPem : `${caPem}\n`;
  await mkdir(bundleDir, { recursive: true });
  const own = await readInside(rootfs, SANDBOX_CA_BUNDLE);
  const bundle = path.join(bundleDir, "ca-certificates.crt");
  const single = path.join(bundleDir, "x-egress-ca.crt");
  const ownEnded = own && !own.endsWith("\n") ? `${own}\n` : (own ?? "");
  await writeFile(bundle, own?.includes(ca.trim()) ? own : `${ownEnded}${ca}`, { mode: 0o644 });
  await writeFile(single, ca, { mode: 0o644 });
  return [
    { source: bundle, destination: SANDBOX_CA_BUNDLE, readonly: true },
    { source: single, destination: SANDBOX_CA_FILE, readonly: true },
  ];
}

/**
 * A regular file of the root filesystem, undefined when it or a directory on its way is
 * missing, a link, or larger than a bundle can be.
 */
async function readInside(rootfs: string, file: string): Promise<string | undefined> {
  const parts = file.split("/").filter(Boolean);
  let at = rootfs;
  for (const [i, part] of parts.entries()) {
    at = path.join(at, part);
    const stat = await lstat(at).catch(() => undefined);
    const last = i === parts.length - 1;
    if (!stat || (last ? !stat.isFile() : !stat.isDirectory())) return undefined;
  }
  const handle = await open(at, constants.O_RDONLY | constants.O_NOFOLLOW).catch(() => undefined);
  if (!handle) return undefined;
  try {
    const stat = await handle.stat();
    if (!stat.isFile() || stat.size > MAX_BUNDLE) return undefined;
    return await handle.readFile("utf8");
  } finally {
    await handle.close();
  }
}
