/** A team: it owns API keys, templates and sandboxes; its namespace prefixes its template names. */
export interface Team {
  id: string;
  name: string;
  /** Prefix of the team's template names: `namespace/alias`. */
  namespace: string;
  createdAt: string;
}

/** An API key as stored: never the key itself, only its hash and a mask people recognise. */
export interface ApiKey {
  id: string;
  teamId: string;
  name: string;
  /** First and last characters of the key. */
  keyMask: string;
  createdAt: string;
  lastUsedAt: string | null;
}

/** The team that owns the platform's own public templates (`system/base`); it has no API keys. */
export const SYSTEM_NAMESPACE = "system";
