import { calculateJwkThumbprint, exportJWK, generateKeyPair, importJWK, type JWK } from "jose";
import { loadOrCreateKeyFile } from "../lib/key-file.js";

export const IDENTITY_ALG = "ES256";

/** The key's public half as published: a JWK with its type and id. */
export type PublicJwk = JWK & { kty: string; kid: string };
/** The file a platform makes for its identity-token key when the operator gives none. */
export const IDENTITY_KEY_NAME = "identity.jwk";

/**
 * The key that signs sandboxes' identity tokens (ES256): a private JWK in a file of its own,
 * the operator's or one made on first start under `<dataDir>/keys/identity.jwk` (0600). Its
 * public half, with its `kid` (the JWK thumbprint), is what relying parties verify with.
 */
export class IdentityKey {
  private constructor(
    readonly kid: string,
    readonly privateKey: CryptoKey,
    readonly publicJwk: PublicJwk,
  ) {}

  static async open(opts: {
    file?: string;
    dataDir: string;
  }): Promise<{ key: IdentityKey; file: string; created: boolean }> {
    const { content, file, created } = await loadOrCreateKeyFile({
      file: opts.file,
      dataDir: opts.dataDir,
      name: IDENTITY_KEY_NAME,
      create: async () => {
        const { privateKey } = await generateKeyPair(IDENTITY_ALG, { extractable: true });
        return Buffer.from(`${JSON.stringify(await exportJWK(privateKey))}\n`);
      },
    });
    let jwk: JWK;
    try {
      jwk = JSON.parse(content.toString("utf8")) as JWK;
    } catch {
      throw new Error(`the identity key file ${file} is not a JSON Web Key`);
    }
    if (jwk.kty !== "EC" || jwk.crv !== "P-256" || !jwk.d || !jwk.x || !jwk.y)
      throw new Error(
        `the identity key file ${file} must hold a private P-256 key (kty EC, crv P-256, with d) as a JWK`,
      );
    const publicPart = { kty: "EC" as const, crv: jwk.crv, x: jwk.x, y: jwk.y };
    const kid = await calculateJwkThumbprint(publicPart);
    const privateKey = (await importJWK({ ...jwk, alg: IDENTITY_ALG }, IDENTITY_ALG)) as CryptoKey;
    return {
      key: new IdentityKey(kid, privateKey, { ...publicPart, kid, alg: IDENTITY_ALG, use: "sig" }),
      file,
      created,
    };
  }
}
