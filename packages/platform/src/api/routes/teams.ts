import type { Schemas } from "@x/platform-client";
import { forbidden, invalid } from "../../model/errors.js";
import {
  effectiveLimits,
  type PlatformLimits,
  perLimit,
  type Team,
  type TeamLimits,
} from "../../model/team.js";
import {
  TEAM_METRICS_DEFAULT_RANGE_S,
  type TeamMetricPoint,
  teamActivity,
} from "../../observability/team-metrics.js";
import type { Store } from "../../store/index.js";
import { credentialOf } from "../authenticate.js";
import type { ApiRequest, HandlersFor } from "../handler.js";
import { teamOf } from "./access.js";

export interface TeamRoutesOptions {
  store: Store;
  /** The platform's own limits, which a team's may only lower. */
  limits: PlatformLimits;
}

/** What `GET /teams` names the key it makes for an access token. */
const MINTED_KEY_NAME = "CLI login/configure";
const USAGE_WINDOW_S = 30 * 24 * 3600;

/** The caller's own team, when the path names it; another team's is refused, as E2B's are. */
function pathTeam(r: Pick<ApiRequest, "team"> & { params: { teamID: string } }, what: string): Team {
  const team = teamOf(r);
  if (r.params.teamID !== team.id)
    throw forbidden(`You (${team.id}) are not authorized to access this team's (${r.params.teamID}) ${what}`);
  return team;
}

/** [start, end) in unix seconds from the query: the last 7 days by default, `end` no later than now. */
function rangeOf(params: { start?: number; end?: number }): { start: number; end: number } {
  const now = Math.ceil(Date.now() / 1000);
  const end = Math.min(params.end ?? now, now);
  const start = params.start ?? end - TEAM_METRICS_DEFAULT_RANGE_S;
  if (start >= end) throw invalid(`start (${start}) must be before end (${end}), and not in the future`);
  return { start, end };
}

const presentPoint = (p: TeamMetricPoint): Schemas["TeamMetric"] => ({
  timestamp: new Date(p.at * 1000).toISOString(),
  timestampUnix: p.at,
  concurrentSandboxes: p.concurrent,
  sandboxStartRate: p.startRate,
});

/** A team's own limits (null: the platform's), or those in force (every one set). */
function presentLimits(limits: PlatformLimits | TeamLimits): Schemas["TeamLimits"] {
  return perLimit((n) => limits[n] ?? null);
}

/** The caller's team (what `e2b auth` asks), its limits and use, and its metrics over time. */
export function teamRoutes(
  o: TeamRoutesOptions,
): HandlersFor<"listTeams" | "getTeam" | "getTeamMetrics" | "getTeamMetricsMax"> {
  return {
    listTeams: async (r) => {
      const team = teamOf(r);
      const credential = r.caller?.credential;
      let apiKey: string;
      if (credential?.kind === "api_key") {
        apiKey = credentialOf(r.req.headers).value;
      } else {
        if (!credential) throw invalid("no credential on the request");
        apiKey = (await o.store.teams.mintKeyForToken(team.id, credential.id, MINTED_KEY_NAME)).key;
      }
      return { status: 200, body: [{ teamID: team.id, name: team.name, apiKey, isDefault: true }] };
    },
    getTeam: async (r) => {
      const team = pathTeam(r, "details");
      const now = Math.ceil(Date.now() / 1000);
      const [states, activity, volumes, templates, snapshots] = await Promise.all([
        o.store.sandboxes.countByState(team.id),
        teamActivity(o.store, team.id, now - USAGE_WINDOW_S, now),
        o.store.volumes.count(team.id),
        o.store.templates.countTemplates(team.id),
        o.store.snapshots.count(team.id),
      ]);
      return {
        status: 200,
        body: {
          teamID: team.id,
          name: team.name,
          namespace: team.namespace,
          createdAt: team.createdAt,
          limits: presentLimits(team.limits),
          effectiveLimits: presentLimits(effectiveLimits(team, o.limits)),
          usage: {
            liveSandboxes: (states.starting ?? 0) + (states.running ?? 0),
            runningSandboxes: states.running ?? 0,
            pausedSandboxes: states.paused ?? 0,
            sandboxSecondsLast30Days: activity.sandboxSeconds,
            volumes,
            templates,
            snapshots,
          },
        },
      };
    },
    getTeamMetrics: async (r) => {
      const team = pathTeam(r, "metrics");
      const { start, end } = rangeOf(r.params);
      const { points } = await teamActivity(o.store, team.id, start, end);
      return { status: 200, body: points.map(presentPoint) };
    },
    getTeamMetricsMax: async (r) => {
      const team = pathTeam(r, "metrics");
      const { start, end } = rangeOf(r.params);
      const { points } = await teamActivity(o.store, team.id, start, end);
      const metricOf = (p: TeamMetricPoint) =>
        r.params.metric === "concurrent_sandboxes" ? p.concurrent : p.startRate;
      let best = points[0] as TeamMetricPoint;
      for (const p of points) if (metricOf(p) > metricOf(best)) best = p;
      return {
        status: 200,
        body: {
          timestamp: new Date(best.at * 1000).toISOString(),
          timestampUnix: best.at,
          value: metricOf(best),
        },
      };
    },
  };
}
