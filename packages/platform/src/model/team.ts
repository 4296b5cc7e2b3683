import { forbidden } from "./errors.js";

/** A team: it owns API keys, templates and sandboxes; its namespace prefixes its template names. */
export interface Team {
  id: string;
  name: string;
  /** Prefix of the team's template names: `namespace/alias`. */
  namespace: string;
  createdAt: string;
  /** What the team's operator set; a limit left null is the platform's. */
  limits: TeamLimits;
}

/** Limits an operator sets per team (`x team limits`). */
export interface TeamLimits {
  /** Sandboxes starting, running or paused at once. */
  sandboxes: number | null;
  /** vCPUs of one sandbox. */
  cpuCount: number | null;
  /** Memory of one sandbox, MiB. */
  memoryMB: number | null;
  /** Disk of one sandbox, MiB. */
  diskSizeMB: number | null;
  /** The longest timeout a sandbox may be given, seconds: how long it lives without being kept alive. */
  timeoutSeconds: number | null;
  /** Volumes the team holds at once. */
  volumes: number | null;
  /** Capacity of one volume, MiB. */
  volumeSizeMB: number | null;
  /** Templates the team holds at once, those made by snapshots included. */
  templates: number | null;
  /** Snapshots the team holds at once (each fork takes one). */
  snapshots: number | null;
  /** Sandboxes one fork request may start. */
  forkCount: number | null;
  /** COPY archives kept for the team's builds (the oldest go first past it). */
  uploads: number | null;
  /** MiB of COPY archives kept for the team's builds (the oldest go first past it). */
  uploadsMB: number | null;
}

/** Every limit, in the order they are shown. */
export const LIMIT_NAMES = [
  "sandboxes",
  "cpuCount",
  "memoryMB",
  "diskSizeMB",
  "timeoutSeconds",
  "volumes",
  "volumeSizeMB",
  "templates",
  "snapshots",
  "forkCount",
  "uploads",
  "uploadsMB",
] as const satisfies ReadonlyArray<keyof TeamLimits>;

export type LimitName = (typeof LIMIT_NAMES)[number];

/** One value for every limit. */
export function perLimit<T>(value: (name: LimitName) => T): Record<LimitName, T> {
  return Object.fromEntries(LIMIT_NAMES.map((n) => [n, value(n)])) as Record<LimitName, T>;
}

export const NO_TEAM_LIMITS: TeamLimits = perLimit(() => null);

/** The platform's own limits, which a team's may only lower: every one finite. */
export type PlatformLimits = Record<LimitName, number>;

/**
 * Refuses (403) a sandbox whose template asks for more CPU, memory or disk than the team may
 * have one sandbox use; `what` names the template in the message.
 */
export function checkResources(
  team: Pick<Team, "limits">,
  platform: PlatformLimits,
  asked: { cpuCount: number; memoryMB: number; diskSizeMB: number },
  what: string,
): void {
  const limits = effectiveLimits(team, platform);
  const over = [
    asked.cpuCount > limits.cpuCount && `${asked.cpuCount} vCPUs (the team's limit is ${limits.cpuCount})`,
    asked.memoryMB > limits.memoryMB &&
      `${asked.memoryMB} MiB of memory (the team's limit is ${limits.memoryMB})`,
    asked.diskSizeMB > limits.diskSizeMB &&
      `${asked.diskSizeMB} MiB of disk (the team's limit is ${limits.diskSizeMB})`,
  ].filter(Boolean);
  if (over.length > 0) throw forbidden(`${what} asks for ${over.join(" and ")}`);
}

/** The limits that apply to a team: its own where set and lower, the platform's otherwise. */
export function effectiveLimits(team: Pick<Team, "limits">, platform: PlatformLimits): PlatformLimits {
  // a team read before a limit existed has none of its own for it
  const pick = (own: number | null | undefined, max: number) => (own == null ? max : Math.min(own, max));
  return perLimit((n) => pick(team.limits[n], platform[n]));
}

/**
 * Refuses (403) one more of something a team holds (volumes, templates, snapshots) when it
 * holds its limit already: waiting does not free one, deleting one does (a 429 would have the
 * e2b client retry in vain).
 */
export function checkRoom(held: number, limit: number, what: string, freeBy: string): void {
  if (held >= limit)
    throw forbidden(
      `your team holds ${held} ${what}, the most it may (its limit is ${limit}): ${freeBy} first`,
    );
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
  kind: CredentialKind;
}

/** An API key goes in `X-API-Key`; an access token in `Authorization: Bearer` (the console, `e2b auth`). */
export type CredentialKind = "api_key" | "access_token";

/** The team that owns the platform's own public templates (`system/base`); it has no API keys. */
export const SYSTEM_NAMESPACE = "system";
