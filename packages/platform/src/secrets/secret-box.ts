import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
import path from "node:path";
import { loadOrCreateKeyFile } from "../lib/key-file.js";
import type { SealedValue } from "../model/secret.js";

export const SECRETS_KEY_BYTES = 32;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;

/** The file a platform makes for its secrets key when the operator gives none. */
export const SECRETS_KEY_NAME = "secrets.key";

/** What a secret's version is sealed for: a sealed value moved to another secret or version does not open. */
function associatedData(secretId: string, version: number): Buffer {
  return Buffer.from(`x-secret:${secretId}:${version}`, "utf8");
}

/** What a bound value is sealed for: a namespace of its own, apart from secret versions. */
function boundData(binding: string): Buffer {
  return Buffer.from(`x-bound:${binding}`, "utf8");
}

/** The start of a bound sealed value as stored (`$x1$<keyId>$<nonce>$<ciphertext>`, base64url). */
export const BOUND_PREFIX = "$x1$";

/**
 * Seals and opens secret values with one AES-256-GCM key: a random nonce per version, the
 * secret's id and version as associated data. The key never leaves this object (its id is a
 * fingerprint of it, to tell which key sealed what).
 */
export class SecretBox {
  readonly keyId: string;

  private constructor(private readonly key: Buffer) {
    this.keyId = createHash("sha256").update("x-secrets-key-id\0").update(key).digest("hex").slice(0, 16);
  }

  /** The key of the operator's file (exactly 32 bytes), or one made under `<dataDir>/keys/` on first start. */
  static async open(opts: {
    file?: string;
    dataDir: string;
  }): Promise<{ box: SecretBox; file: string; created: boolean }> {
    const { content, file, created } = await loadOrCreateKeyFile({
      file: opts.file,
      dataDir: opts.dataDir,
      name: SECRETS_KEY_NAME,
      create: () => randomBytes(SECRETS_KEY_BYTES),
    });
    if (content.length !== SECRETS_KEY_BYTES) {
      throw new Error(
        `the secrets key file ${file} holds ${content.length} bytes, not ${SECRETS_KEY_BYTES}: make one with \`head -c 32 /dev/urandom > FILE\``,
      );
    }
    return { box: new SecretBox(content), file, created };
  }

  static of(key: Buffer): SecretBox {
    if (key.length !== SECRETS_KEY_BYTES) throw new Error(`a secrets key is ${SECRETS_KEY_BYTES} bytes`);
    return new SecretBox(Buffer.from(key));
  }

  seal(value: string, secretId: string, version: number): SealedValue {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    cipher.setAAD(associatedData(secretId, version));
    const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return { keyId: this.keyId, nonce: nonce.toString("base64"), ciphertext: ciphertext.toString("base64") };
  }

  /** The value, or an error (never the ciphertext, never a wrong value) when this key did not seal it. */
  open(sealed: SealedValue, secretId: string, version: number): string {
    return this.decrypt(
      Buffer.from(sealed.nonce, "base64"),
      Buffer.from(sealed.ciphertext, "base64"),
      associatedData(secretId, version),
    );
  }

  /**
   * Seals a value bound to what it is for (`binding`, e.g. `sandbox:ID:envd-access-token`):
   * moved to another row or field, it does not open. One line of text, for a text column.
   */
  sealBound(value: string, binding: string): string {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv("aes-256-gcm", this.key, nonce);
    cipher.setAAD(boundData(binding));
    const ciphertext = Buffer.concat([cipher.update(value, "utf8"), cipher.final(), cipher.getAuthTag()]);
    return `${BOUND_PREFIX}${this.keyId}$${nonce.toString("base64url")}$${ciphertext.toString("base64url")}`;
  }

  /** A value sealBound sealed for `binding`; an error naming the key when another key sealed it. */
  openBound(text: string, binding: string): string {
    const [keyId, nonce, ciphertext, ...rest] = text.startsWith(BOUND_PREFIX)
      ? text.slice(BOUND_PREFIX.length).split("$")
      : [];
    if (!keyId || nonce === undefined || ciphertext === undefined || rest.length > 0)
      throw new Error("the sealed value is malformed");
    if (keyId !== this.keyId)
      throw new Error(`the value was sealed by another secrets key (${keyId}, not ${this.keyId})`);
    return this.decrypt(
      Buffer.from(nonce, "base64url"),
      Buffer.from(ciphertext, "base64url"),
      boundData(binding),
    );
  }

  private decrypt(nonce: Buffer, data: Buffer, aad: Buffer): string {
    if (nonce.length !== NONCE_BYTES || data.length < TAG_BYTES)
      throw new Error("the sealed value is malformed");
    const decipher = createDecipheriv("aes-256-gcm", this.key, nonce);
    decipher.setAAD(aad);
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(data.subarray(0, data.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  }
}

/**
 * Whether the key file lies in the data directory together with the database (SQLite's file
 * there): one copy of the directory, a backup say, then holds the sealed values and their key.
 */
export function keyBesideDatabase(keyFile: string, o: { dataDir: string; databaseUrl?: string }): boolean {
  const url = o.databaseUrl;
  if (url && /^postgres(ql)?:\/\//.test(url)) return false;
  const db = url?.startsWith("sqlite:") ? url.slice("sqlite:".length) : path.join(o.dataDir, "platform.db");
  const inside = (dir: string, file: string) => {
    const rel = path.relative(path.resolve(dir), path.resolve(file));
    return rel !== "" && !rel.startsWith("..") && !path.isAbsolute(rel);
  };
  return inside(o.dataDir, keyFile) && inside(o.dataDir, db);
}
