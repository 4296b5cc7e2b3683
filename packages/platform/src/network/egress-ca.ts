import { randomBytes, X509Certificate } from "node:crypto";
import { access, mkdtemp, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { command } from "../lib/command.js";
import { EC_KEY, localCa } from "../lib/local-ca.js";

/** A leaf is minted this long, and minted again this long before it ends. */
const LEAF_DAYS = 30;
const RENEW_BEFORE_MS = 24 * 3600 * 1000;
/** Names whose leaves are kept at most (the least recently used goes first). */
const MAX_LEAVES = 1000;

/** Host names a leaf may be made for: letters, digits, `-`, `_` and dots, nothing openssl reads otherwise. */
const HOST_NAME =
  /^(?=.{1,253}$)([a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?\.)*[a-z0-9_]([a-z0-9_-]{0,61}[a-z0-9_])?$/;

/**
 * The platform's egress CA: the one sandboxes trust (it is installed into each at boot), whose
 * key signs the certificates the egress proxy presents for names with header transforms. Made
 * with openssl on first start under `dir` (the key 0600, never in a sandbox), kept ten years.
 */
export class EgressCa {
  private readonly leaves = new Map<string, Promise<{ context: tls.SecureContext; validTo: number }>>();

  private constructor(
    /** The CA's certificate, PEM. */
    readonly cert: string,
    readonly certFile: string,
    private readonly keyFile: string,
  ) {}

  static async open(dir: string): Promise<EgressCa> {
    if (!(await exists(path.join(dir, "ca.key")))) {
      // made aside and moved in whole, so platforms starting at once on one data directory
      // all end up with the same pair
      const made = `${dir}.new-${randomBytes(6).toString("hex")}`;
      try {
        await localCa(made, "egress CA");
        await rename(made, dir).catch((err: NodeJS.ErrnoException) => {
          if (err.code !== "ENOTEMPTY" && err.code !== "EEXIST") throw err;
        });
      } finally {
        await rm(made, { recursive: true, force: true });
      }
    }
    const ca = await localCa(dir, "egress CA");
    return new EgressCa(ca.cert, ca.certFile, ca.keyFile);
  }

  /**
   * A TLS context presenting a certificate for `name` signed by this CA, made on first use and
   * kept (per name). Throws for a name that is not a plain host name.
   */
  async contextFor(name: string): Promise<tls.SecureContext> {
    const host = name.toLowerCase();
    if (!HOST_NAME.test(host)) throw new Error(`not a host name a certificate can be made for: ${name}`);
    let leaf = this.leaves.get(host);
    if (leaf) {
      const kept = await leaf.catch(() => undefined);
      if (!kept || kept.validTo - Date.now() < RENEW_BEFORE_MS) leaf = undefined;
    }
    if (!leaf) {
      leaf = this.mint(host);
      // a failure is not kept: the next connection tries again
      leaf.catch(() => this.leaves.delete(host));
    }
    // most recently used last
    this.leaves.delete(host);
    this.leaves.set(host, leaf);
    if (this.leaves.size > MAX_LEAVES) this.leaves.delete(this.leaves.keys().next().value!);
    return (await leaf).context;
  }

  /** Leaves kept now (for tests and metrics). */
  get cachedNames(): string[] {
    return [...this.leaves.keys()];
  }

  private async mint(host: string): Promise<{ context: tls.SecureContext; validTo: number }> {
    const config = [
      "[req]",
      "distinguished_name = dn",
      "prompt = no",
      "[dn]",
      `CN = ${host}`,
      "[ext]",
      `subjectAltName = DNS:${host}`,
      "extendedKeyUsage = serverAuth",
      "keyUsage = critical, digitalSignature",
      "basicConstraints = critical, CA:FALSE",
      "",
    ].join("\n");
    // openssl reads and writes files (the platform's command helper gives it no /dev/stdin)
    const work = await mkdtemp(path.join(os.tmpdir(), "x-egress-leaf-"));
    let key: string;
    let cert: string;
    try {
      const file = (name: string) => path.join(work, name);
      await writeFile(file("req.cnf"), config, { mode: 0o600 });
      await command("openssl", [
        "req",
        "-x509",
        "-config",
        file("req.cnf"),
        "-extensions",
        "ext",
        ...EC_KEY,
        "-days",
        String(LEAF_DAYS),
        "-CA",
        this.certFile,
        "-CAkey",
        this.keyFile,
        "-set_serial",
        `0x${randomBytes(16).toString("hex")}`,
        "-keyout",
        file("leaf.key"),
        "-out",
        file("leaf.pem"),
      ]);
      [key, cert] = await Promise.all([
        readFile(file("leaf.key"), "utf8"),
        readFile(file("leaf.pem"), "utf8"),
      ]);
    } finally {
      await rm(work, { recursive: true, force: true });
    }
    return {
      context: tls.createSecureContext({ key, cert: `${cert}\n${this.cert}` }),
      validTo: Date.parse(new X509Certificate(cert).validTo),
    };
  }
}

/** Operator-given CA files (PEM, several certificates each allowed), for verifying origins. */
export async function readCaFiles(files: readonly string[]): Promise<string[]> {
  const pems = await Promise.all(files.map((f) => readFile(f, "utf8")));
  return pems.flatMap(
    (pem) => pem.match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [],
  );
}

async function exists(file: string): Promise<boolean> {
  return access(file).then(
    () => true,
    () => false,
  );
}
