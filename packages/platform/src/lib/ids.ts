import { createHash, randomBytes, randomUUID } from "node:crypto";

/** Sandbox ids: short, lowercase, DNS-label safe (they appear in `{port}-{id}.{domain}`). */
export function newSandboxId(): string {
  return `i${randomBytes(10).toString("hex")}`;
}

/** Template ids, likewise DNS-safe. */
export function newTemplateId(): string {
  return randomBytes(10).toString("hex");
}

export function newBuildId(): string {
  return randomUUID();
}

export function newId(): string {
  return randomBytes(12).toString("hex");
}

/** Ids that sort by creation time: 13 digits of milliseconds, then randomness. */
export function newTimeOrderedId(now = Date.now()): string {
  return `${String(now).padStart(13, "0")}-${randomBytes(4).toString("hex")}`;
}

/** API keys in the format the public client accepts: `e2b_` and 40 lowercase hex digits. */
export function newApiKey(): string {
  return `e2b_${randomBytes(20).toString("hex")}`;
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
