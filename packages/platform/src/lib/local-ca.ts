/** A local certificate authority made with openssl: the platform's HTTPS and egress CAs. */
import { chmod, mkdir, readFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { command } from "./command.js";

/** A file's text, or undefined when there is no such file. */
export const readIfThere = (file: string): Promise<string | undefined> =>
  readFile(file, "utf8").catch((err: NodeJS.ErrnoException) => {
    if (err.code === "ENOENT") return undefined;
    throw err;
  });

/**
 * A local CA (`ca.pem`, `ca.key` in `dir`, the key 0600), made on first need and kept ten
 * years; `name` says what it is for in its subject.
 */
export async function localCa(
  dir: string,
  name = "local CA",
): Promise<{ cert: string; certFile: string; keyFile: string }> {
  const keyFile = path.join(dir, "ca.key");
  const certFile = path.join(dir, "ca.pem");
  const [cert, key] = await Promise.all([readIfThere(certFile), readIfThere(keyFile)]);
  if (cert && key) return { cert, certFile, keyFile };
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await command("openssl", [
    "req",
    "-x509",
    ...EC_KEY,
    "-days",
    "3650",
    "-subj",
    `/CN=x sandbox platform ${name} (${os.hostname()})`,
    "-addext",
    "basicConstraints=critical,CA:TRUE",
    "-addext",
    "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout",
    keyFile,
    "-out",
    certFile,
  ]);
  await chmod(keyFile, 0o600);
  return { cert: await readFile(certFile, "utf8"), certFile, keyFile };
}

export const EC_KEY = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"];
