/**
 * A team's secrets (E2B's wire): a name, metadata and versions of a value that only the
 * egress proxy ever reads. The rules and the messages here are E2B's, content-free on
 * purpose: an answer about a secret never echoes what was sent.
 */
import { invalid, notFound } from "./errors.js";
import { normalizeSecretName, SECRET_ID_PREFIX } from "./placeholders.js";

/** A secret as the API shows it: never its value. */
export interface SecretInfo {
  /** `sec_` and 26 base32 characters (a TypeID). */
  id: string;
  teamId: string;
  /** Trimmed and lower-cased (see normalizeSecretName). */
  name: string;
  /** 1 for a new secret, one more for each update: the version in use. */
  currentVersion: number;
  metadata: Record<string, string>;
  createdAt: string;
  updatedAt: string;
}

export const INVALID_SECRETS_REQUEST = "Invalid secrets request";
export const SECRET_NOT_FOUND = "Secret not found";
export const SECRET_CONFLICT = "Secret cannot be modified in its current state";

export const secretsRequestInvalid = () => invalid(INVALID_SECRETS_REQUEST);
export const secretNotFound = () => notFound(SECRET_NOT_FOUND);

/** The longest value accepted, in bytes of UTF-8. */
export const MAX_SECRET_VALUE_BYTES = 64 * 1024;
const MAX_METADATA_ENTRIES = 32;
const MAX_METADATA_KEY_BYTES = 128;
const MAX_METADATA_VALUE_BYTES = 1024;
const MAX_METADATA_BYTES = 8192;

/** A secret's id or its name, as a path's `{secretID}` names it. */
export type SecretSelector = { id: string } | { name: string };

/**
 * A `{secretID}`: trimmed and lower-cased, `sec_…` is an id and parsed strictly (an invalid
 * one is a 400, never taken for a name), anything else is a name.
 */
export function parseSecretSelector(raw: string, isId: (id: string) => boolean): SecretSelector {
  const normal = raw.trim().toLowerCase();
  if (normal.startsWith(SECRET_ID_PREFIX)) {
    if (!isId(normal)) throw secretsRequestInvalid();
    return { id: normal };
  }
  const name = normalizeSecretName(normal);
  if (!name) throw secretsRequestInvalid();
  return { name };
}

/** A name to store, or E2B's 400. */
export function checkedSecretName(raw: string): string {
  const name = normalizeSecretName(raw);
  if (!name) throw secretsRequestInvalid();
  return name;
}

/** A value to store: non-empty, at most 64 KiB, no NUL; or E2B's 400. */
export function checkSecretValue(value: string): void {
  if (value.length === 0 || value.includes("\u0000") || Buffer.byteLength(value) > MAX_SECRET_VALUE_BYTES)
    throw secretsRequestInvalid();
}

/** Metadata to store: at most 32 entries, keys ≤ 128 bytes (not empty), values ≤ 1024, 8192 in all. */
export function checkSecretMetadata(metadata: Record<string, string>): void {
  const entries = Object.entries(metadata);
  if (entries.length > MAX_METADATA_ENTRIES) throw secretsRequestInvalid();
  let total = 0;
  for (const [key, value] of entries) {
    const k = Buffer.byteLength(key);
    const v = Buffer.byteLength(value);
    if (k === 0 || k > MAX_METADATA_KEY_BYTES || v > MAX_METADATA_VALUE_BYTES) throw secretsRequestInvalid();
    total += k + v;
  }
  if (total > MAX_METADATA_BYTES) throw secretsRequestInvalid();
}

/** A value as sealed with the platform's secrets key: what is stored, never the value itself. */
export interface SealedValue {
  /** Which key sealed it (its fingerprint). */
  keyId: string;
  nonce: string;
  ciphertext: string;
}
