import type { PlatformEvent, Store } from "../store/index.js";

/** E2B exports team metrics every 5 s: the finest step. */
export const TEAM_METRICS_STEP_S = 5;
/** Points of one answer at most: a longer range takes a longer step. */
export const TEAM_METRICS_MAX_POINTS = 1000;
/** The range when none is given, as E2B's. */
export const TEAM_METRICS_DEFAULT_RANGE_S = 7 * 24 * 3600;

/** Events that start or end a sandbox's running (a deepened pause is "paused" again: no change). */
const STARTS = new Set(["sandbox.created", "sandbox.resumed", "sandbox.recovered"]);
const STOPS = new Set(["sandbox.paused", "sandbox.killed", "sandbox.lost", "sandbox.broken"]);
const LIFECYCLE = [...STARTS, ...STOPS];

export interface TeamMetricPoint {
  /** Start of the step, unix seconds. */
  at: number;
  /** The most sandboxes running at once during the step. */
  concurrent: number;
  /** Sandboxes created during the step, per second. */
  startRate: number;
}

export interface TeamActivity {
  points: TeamMetricPoint[];
  /** Seconds sandboxes ran within the range, summed over sandboxes. */
  sandboxSeconds: number;
}

/** The step for a range: 5 s, or longer so the answer has at most 1000 points. */
export function stepFor(rangeSeconds: number): number {
  return Math.max(TEAM_METRICS_STEP_S, Math.ceil(rangeSeconds / TEAM_METRICS_MAX_POINTS));
}

/**
 * Replays lifecycle events (in time order) over [start, end) unix seconds: how many sandboxes
 * ran at most in each step, how many were created per second, and the running seconds in all.
 */
export function replayActivity(events: PlatformEvent[], start: number, end: number): TeamActivity {
  const step = stepFor(end - start);
  const runningSince = new Map<string, number>();
  let sandboxSeconds = 0;
  let next = 0;
  /** Applies the events before `until`; returns the most running at once and the creates seen from `from`. */
  const applyUntil = (until: number, from: number) => {
    let most = runningSince.size;
    let created = 0;
    for (; next < events.length; next++) {
      const event = events[next] as PlatformEvent;
      const t = Date.parse(event.at) / 1000;
      if (t >= until) break;
      const id = event.sandboxId;
      if (!id) continue;
      if (STARTS.has(event.type) && !runningSince.has(id)) {
        runningSince.set(id, t);
        most = Math.max(most, runningSince.size);
        if (event.type === "sandbox.created" && t >= from) created++;
      } else if (STOPS.has(event.type) && runningSince.has(id)) {
        const since = runningSince.get(id) as number;
        sandboxSeconds += Math.max(0, t - Math.max(since, start));
        runningSince.delete(id);
      }
    }
    return { most, created };
  };

  applyUntil(start, start);
  const points: TeamMetricPoint[] = [];
  for (let at = start; at < end; at += step) {
    const { most, created } = applyUntil(Math.min(at + step, end), at);
    points.push({ at, concurrent: most, startRate: created / step });
  }
  for (const since of runningSince.values()) sandboxSeconds += Math.max(0, end - Math.max(since, start));
  return { points, sandboxSeconds: Math.round(sandboxSeconds) };
}

/** A team's activity over [start, end) unix seconds, from the store's lifecycle events. */
export async function teamActivity(
  store: Pick<Store, "events">,
  teamId: string,
  start: number,
  end: number,
): Promise<TeamActivity> {
  const events = await store.events.ofTeamSandboxesLivingIn(teamId, LIFECYCLE, {
    from: new Date(start * 1000).toISOString(),
    to: new Date(end * 1000).toISOString(),
  });
  return replayActivity(events, start, end);
}
