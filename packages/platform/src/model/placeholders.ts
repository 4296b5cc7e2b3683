/**
 * The placeholders a sandbox's egress header transforms may hold (E2B's wire,
 * `${e2b.secrets.NAME}` and `${e2b.identity.tokens.NAME}`): the values are put in by the
 * platform's egress proxy on each matching request and never enter the sandbox.
 */
import { invalid } from "./errors.js";

export const SECRET_PLACEHOLDER = "${e2b.secrets.";
export const IDENTITY_PLACEHOLDER = "${e2b.identity.tokens.";

/** E2B's one message for any malformed placeholder. */
export const MALFORMED_PLACEHOLDER = "Network transform header contains a malformed E2B placeholder.";

/** Secret names: 1-128 of these characters, lower-cased; `sec_…` is the IDs' prefix. */
const SECRET_NAME = /^[a-z0-9_-]{1,128}$/;
export const SECRET_ID_PREFIX = "sec_";

/** A secret's name as stored and matched: trimmed and lower-cased; undefined when it is not one. */
export function normalizeSecretName(name: string): string | undefined {
  const normal = name.trim().toLowerCase();
  return SECRET_NAME.test(normal) && !normal.startsWith(SECRET_ID_PREFIX) ? normal : undefined;
}

/** An identity token's name (`iam.tokens` keys): non-empty, no braces, no control characters. */
export function validIdentityName(name: string): boolean {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: control characters are what it refuses
  return name.length > 0 && name.length <= 128 && !/[{}\u0000-\u001f\u007f]/.test(name);
}

export type Placeholder = { kind: "secret"; name: string } | { kind: "identity"; name: string };

/** A header value cut into literal text and placeholders, in order. */
export type TemplatePart = string | Placeholder;

/**
 * Parses a header value: the text outside the two known prefixes is literal (a `${foo}` passes
 * through), a known prefix must close with `}` around a valid name. Throws E2B's 400 otherwise.
 */
export function parseHeaderTemplate(value: string): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let rest = value;
  for (;;) {
    const at = nextPlaceholder(rest);
    if (!at) break;
    if (at.index > 0) parts.push(rest.slice(0, at.index));
    const start = at.index + at.prefix.length;
    const end = rest.indexOf("}", start);
    const raw = end < 0 ? undefined : rest.slice(start, end);
    if (raw === undefined || raw.includes("${")) throw invalid(MALFORMED_PLACEHOLDER);
    if (at.kind === "secret") {
      const name = normalizeSecretName(raw);
      if (!name || raw !== raw.trim()) throw invalid(MALFORMED_PLACEHOLDER);
      parts.push({ kind: "secret", name });
    } else {
      if (!validIdentityName(raw)) throw invalid(MALFORMED_PLACEHOLDER);
      parts.push({ kind: "identity", name: raw });
    }
    rest = rest.slice(end + 1);
  }
  if (rest.length > 0) parts.push(rest);
  return parts;
}

function nextPlaceholder(
  text: string,
): { index: number; prefix: string; kind: Placeholder["kind"] } | undefined {
  const secret = text.indexOf(SECRET_PLACEHOLDER);
  const identity = text.indexOf(IDENTITY_PLACEHOLDER);
  if (secret < 0 && identity < 0) return undefined;
  if (identity < 0 || (secret >= 0 && secret < identity))
    return { index: secret, prefix: SECRET_PLACEHOLDER, kind: "secret" };
  return { index: identity, prefix: IDENTITY_PLACEHOLDER, kind: "identity" };
}

/** The distinct secret names a header value refers to. */
export function secretNamesIn(parts: TemplatePart[]): string[] {
  return [...new Set(parts.flatMap((p) => (typeof p !== "string" && p.kind === "secret" ? [p.name] : [])))];
}

/**
 * Where placeholder values come from, at request time: the secrets store (the secret's
 * current version) and the identity-token minter. Undefined means there is none: the request
 * fails closed, and the literal placeholder never leaves.
 */
export interface PlaceholderValues {
  /** The current value of the team's secret (its normalised name). */
  secret(teamId: string, name: string): Promise<string | undefined>;
  /** A fresh identity token for the sandbox's registered token `name`. */
  identityToken(sandboxId: string, name: string): Promise<string | undefined>;
}

/**
 * The values there are until a secrets store and an identity-token minter are wired in: none,
 * so every placeholder fails closed.
 */
export const NO_PLACEHOLDER_VALUES: PlaceholderValues = {
  secret: async () => undefined,
  identityToken: async () => undefined,
};

/** A header value with its placeholders filled in; undefined when one of them has no value. */
export async function fillHeaderTemplate(
  parts: TemplatePart[],
  teamId: string,
  sandboxId: string,
  values: PlaceholderValues,
): Promise<{ value: string } | { missing: Placeholder }> {
  let out = "";
  for (const part of parts) {
    if (typeof part === "string") {
      out += part;
      continue;
    }
    const value =
      part.kind === "secret"
        ? await values.secret(teamId, part.name)
        : await values.identityToken(sandboxId, part.name);
    if (value === undefined) return { missing: part };
    out += value;
  }
  return { value: out };
}
