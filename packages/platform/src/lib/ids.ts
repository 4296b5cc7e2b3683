import { createHash, randomBytes, randomUUID } from "node:crypto";

/** Sandbox ids: short, lowercase, DNS-label safe (they appear in `{port}-{id}.{domain}`). */
export function newSandboxId(): string {
  return `i${randomBytes(10).toString("hex")}`;
}

/** Template ids, likewise DNS-safe. */
export function newTemplateId(): string {
  return randomBytes(10).toString("hex");
}

/** What a template id looks like (newTemplateId's 20 hex digits). */
export function isTemplateIdForm(name: string): boolean {
  return /^[0-9a-f]{20}$/.test(name);
}

export function newBuildId(): string {
  return randomUUID();
}

export function newId(): string {
  return randomBytes(12).toString("hex");
}

let lastIdMs = 0;
let idsThisMs = 0;

/**
 * Ids that sort by creation time: 13 digits of milliseconds, a count within the millisecond
 * (so that this process's ids of one millisecond keep their order too), then randomness.
 */
export function newTimeOrderedId(now = Date.now()): string {
  idsThisMs = now === lastIdMs ? idsThisMs + 1 : 0;
  lastIdMs = now;
  return `${String(now).padStart(13, "0")}-${idsThisMs.toString(16).padStart(4, "0")}${randomBytes(4).toString("hex")}`;
}

/** API keys in the format the public client accepts: `e2b_` and 40 lowercase hex digits. */
export const API_KEY_PREFIX = "e2b_";
export const ACCESS_TOKEN_PREFIX = "sk_e2b_";
/** Hex digits after the prefix of a key or token. */
export const SECRET_DIGITS = 40;

export function newApiKey(): string {
  return `${API_KEY_PREFIX}${randomBytes(SECRET_DIGITS / 2).toString("hex")}`;
}

/** An access token: `sk_e2b_` as E2B's, told apart from API keys by its prefix. */
export function newAccessToken(): string {
  return `${ACCESS_TOKEN_PREFIX}${randomBytes(SECRET_DIGITS / 2).toString("hex")}`;
}

export function hashSecret(secret: string): string {
  return createHash("sha256").update(secret).digest("hex");
}

/** A random secret for envd access tokens and signed upload URLs. */
export function newSecret(): string {
  return randomBytes(24).toString("base64url");
}

let lastIssued = 0;

/**
 * Now as ISO-8601 text, strictly later than the previous call in this process, so that rows
 * created in the same millisecond (two builds, say) still have an order: "newest" is defined.
 */
export function nowIso(date?: Date): string {
  if (date) return date.toISOString();
  lastIssued = Math.max(Date.now(), lastIssued + 1);
  return new Date(lastIssued).toISOString();
}

/** TypeID's base32 (Crockford's, lower case): 26 characters carry 128 bits, the first at most `7`. */
const TYPEID_ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";
const TYPEID_SUFFIX = /^[0-7][0-9abcdefghjkmnpqrstvwxyz]{25}$/;

/** A TypeID (`prefix_` and a UUIDv7 in 26 base32 characters): sorts by creation time, as E2B's ids. */
export function newTypeId(prefix: string, now = Date.now()): string {
  const bytes = randomBytes(16);
  bytes.writeUIntBE(now, 0, 6);
  bytes[6] = (bytes[6]! & 0x0f) | 0x70; // version 7
  bytes[8] = (bytes[8]! & 0x3f) | 0x80; // variant 10
  let value = BigInt(`0x${bytes.toString("hex")}`);
  let out = "";
  for (let i = 0; i < 26; i++) {
    out = TYPEID_ALPHABET[Number(value & 31n)] + out;
    value >>= 5n;
  }
  return `${prefix}_${out}`;
}

/** Whether `id` is a TypeID of this prefix, parsed strictly (lower case, 26 characters, at most 128 bits). */
export function isTypeId(id: string, prefix: string): boolean {
  return id.startsWith(`${prefix}_`) && TYPEID_SUFFIX.test(id.slice(prefix.length + 1));
}
