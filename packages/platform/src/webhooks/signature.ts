import { createHash, timingSafeEqual } from "node:crypto";

/** The `e2b-signature-version` of `signPayload`. */
export const SIGNATURE_VERSION = "v1";

/**
 * E2B's webhook signature: SHA-256 of the secret followed by the raw body, base64url without
 * padding (E2B's published verification code maps `+/` to `-_` and strips the `=`).
 */
export function signPayload(secret: string, body: string): string {
  return createHash("sha256")
    .update(secret + body, "utf8")
    .digest("base64url");
}

/** Whether `signature` is the body's signature under `secret` (in constant time). */
export function verifySignature(secret: string, body: string, signature: string): boolean {
  const expected = Buffer.from(signPayload(secret, body));
  const given = Buffer.from(signature);
  return expected.length === given.length && timingSafeEqual(expected, given);
}
