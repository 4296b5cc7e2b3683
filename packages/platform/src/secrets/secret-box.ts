import { createCipheriv, createDecipheriv, createHash, randomBytes } from "node:crypto";
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
    const nonce = Buffer.from(sealed.nonce, "base64");
    const data = Buffer.from(sealed.ciphertext, "base64");
    if (nonce.length !== NONCE_BYTES || data.length < TAG_BYTES)
      throw new Error("the sealed value is malformed");
    const decipher = createDecipheriv("aes-256-gcm", this.key, nonce);
    decipher.setAAD(associatedData(secretId, version));
    decipher.setAuthTag(data.subarray(data.length - TAG_BYTES));
    return Buffer.concat([
      decipher.update(data.subarray(0, data.length - TAG_BYTES)),
      decipher.final(),
    ]).toString("utf8");
  }
}
