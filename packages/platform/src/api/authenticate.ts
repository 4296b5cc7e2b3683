import { API_KEY_PREFIX } from "../lib/ids.js";
import type { Logger } from "../lib/log.js";
import { unauthenticated } from "../model/errors.js";
import type { CredentialKind, Team } from "../model/team.js";
import type { Store } from "../store/index.js";

/** A key's `lastUsedAt` is written at most this often, not on every request. */
const TOUCH_EVERY_MS = 60_000;

/** What a request presented: an API key (`X-API-Key`) or an access token (`Authorization: Bearer`). */
export interface Credential {
  kind: CredentialKind;
  value: string;
}

/** Who made a request: the team, and which of its keys or tokens it used. */
export interface Caller {
  team: Team;
  credential: { kind: CredentialKind; id: string; name: string };
}

export type Authenticate = (credential: Credential) => Promise<Caller | undefined>;

/**
 * The credential of a request: `X-API-Key` first (what the e2b client sends), else a bearer
 * token (the console, `e2b auth`); a 401 saying what to send when there is neither.
 */
export function credentialOf(headers: Record<string, string | string[] | undefined>): Credential {
  const first = (v: string | string[] | undefined) => (Array.isArray(v) ? v[0] : v);
  const key = first(headers["x-api-key"]);
  if (key) return { kind: "api_key", value: key };
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(first(headers.authorization) ?? "")?.[1];
  // a bearer value that is an API key counts as one
  if (bearer) return { kind: bearer.startsWith(API_KEY_PREFIX) ? "api_key" : "access_token", value: bearer };
  throw unauthenticated(
    "missing API key: send it in the X-API-Key header (or an access token as Authorization: Bearer)",
  );
}

/** Resolves API keys and access tokens to teams (revocation takes effect at once) and records their use. */
export function createAuthenticator(store: Store, log: Logger): Authenticate {
  const touched = new Map<string, number>();
  return async (credential) => {
    const found = await store.teams.teamForKey(credential.value, credential.kind);
    if (!found) return undefined;
    const now = Date.now();
    if (now - (touched.get(found.keyId) ?? 0) >= TOUCH_EVERY_MS) {
      touched.set(found.keyId, now);
      await store.teams
        .touchKey(found.keyId)
        .catch((err: unknown) => log.warn({ err }, "cannot record API key use"));
    }
    return {
      team: found.team,
      credential: { kind: credential.kind, id: found.keyId, name: found.keyName },
    };
  };
}
