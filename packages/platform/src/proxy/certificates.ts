import { X509Certificate } from "node:crypto";
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import tls from "node:tls";
import { command } from "../lib/command.js";
import { EC_KEY, localCa, readIfThere } from "../lib/local-ca.js";

/** A certificate chain and its key, PEM. */
export interface TlsIdentity {
  cert: string;
  key: string;
}

/** What the platform serves HTTPS with, and where a client finds the CA to trust. */
export interface ProxyCertificate extends TlsIdentity {
  /** The local CA's certificate, when the platform made its own (not the operator's). */
  caFile?: string;
}

/** A certificate is made again this long before it expires. */
const RENEW_BEFORE_MS = 30 * 24 * 3600 * 1000;

/**
 * The proxy's certificate for `*.{domain}` and `{domain}`: the operator's own files when given
 * (checked: the key must match and the certificate must name the domain), otherwise one signed
 * by a local CA the platform creates on first start under `dir`, with openssl. The CA is kept
 * for ten years, so a client that trusts it once keeps trusting it; the wildcard certificate
 * is made again when the domain changes, when it nears its end, or when the CA is new.
 */
export async function proxyCertificate(o: {
  dir: string;
  domain: string;
  certFile?: string;
  keyFile?: string;
}): Promise<ProxyCertificate> {
  if (o.certFile || o.keyFile) {
    if (!o.certFile || !o.keyFile)
      throw new Error("a TLS certificate needs both its certificate and key file");
    const identity = { cert: await readFile(o.certFile, "utf8"), key: await readFile(o.keyFile, "utf8") };
    checkIdentity(identity, o.domain, o.certFile);
    return identity;
  }
  await mkdir(o.dir, { recursive: true, mode: 0o700 });
  const ca = await localCa(o.dir);
  const name = o.domain.replace(/[^a-zA-Z0-9.-]/g, "_");
  const keyFile = path.join(o.dir, `${name}.key`);
  const certFile = path.join(o.dir, `${name}.pem`);
  const [cert, key] = await Promise.all([readIfThere(certFile), readIfThere(keyFile)]);
  if (cert && key && usable(cert, ca.cert, o.domain)) return { cert, key, caFile: ca.certFile };
  await issue({ dir: o.dir, domain: o.domain, keyFile, certFile });
  return {
    cert: await readFile(certFile, "utf8"),
    key: await readFile(keyFile, "utf8"),
    caFile: ca.certFile,
  };
}

/** Whether a kept certificate still serves: the CA's, for the domain, not near its end. */
function usable(pem: string, caPem: string, domain: string): boolean {
  const cert = new X509Certificate(pem);
  return (
    cert.verify(new X509Certificate(caPem).publicKey) &&
    cert.checkHost(`x.${domain}`) !== undefined &&
    Date.parse(cert.validTo) - Date.now() > RENEW_BEFORE_MS
  );
}

/** An operator's certificate that cannot serve the domain is refused at start, not at the first client. */
function checkIdentity(identity: TlsIdentity, domain: string, file: string): void {
  try {
    tls.createSecureContext(identity);
  } catch (err) {
    throw new Error(`${file}: the certificate and key do not go together (${(err as Error).message})`);
  }
  const cert = new X509Certificate(identity.cert);
  if (cert.checkHost(`x.${domain}`) === undefined) {
    throw new Error(
      `${file}: the certificate does not name *.${domain} (it names ${cert.subjectAltName ?? cert.subject})`,
    );
  }
}

/** A wildcard certificate for the domain, signed by the local CA in `dir`. */
async function issue(o: { dir: string; domain: string; certFile: string; keyFile: string }): Promise<void> {
  const csr = `${o.certFile}.csr`;
  const ext = `${o.certFile}.ext`;
  await writeFile(
    ext,
    `subjectAltName=DNS:*.${o.domain},DNS:${o.domain}\nextendedKeyUsage=serverAuth\nbasicConstraints=CA:FALSE\n`,
  );
  try {
    await command("openssl", [
      "req",
      ...EC_KEY,
      "-subj",
      `/CN=*.${o.domain}`,
      "-keyout",
      o.keyFile,
      "-out",
      csr,
    ]);
    await command("openssl", [
      "x509",
      "-req",
      "-in",
      csr,
      "-CA",
      path.join(o.dir, "ca.pem"),
      "-CAkey",
      path.join(o.dir, "ca.key"),
      "-CAcreateserial",
      "-days",
      "825",
      "-extfile",
      ext,
      "-out",
      o.certFile,
    ]);
  } finally {
    await Promise.all([rm(csr, { force: true }), rm(ext, { force: true })]);
  }
}
