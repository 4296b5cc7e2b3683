import type { Logger } from "../lib/log.js";
import type { Team } from "../model/team.js";
import type { Store } from "../store/index.js";

/** A key's `lastUsedAt` is written at most this often, not on every request. */
const TOUCH_EVERY_MS = 60_000;

/** Resolves API keys to teams (revocation takes effect at once) and records when keys were used. */
export function createAuthenticator(
  store: Store,
  log: Logger,
): (apiKey: string) => Promise<Team | undefined> {
  const touched = new Map<string, number>();
  return async (apiKey) => {
    const found = await store.teams.teamForKey(apiKey);
    if (!found) return undefined;
    const now = Date.now();
    if (now - (touched.get(found.keyId) ?? 0) >= TOUCH_EVERY_MS) {
      touched.set(found.keyId, now);
      await store.teams
        .touchKey(found.keyId)
        .catch((err: unknown) => log.warn({ err }, "cannot record API key use"));
    }
    return found.team;
  };
}
