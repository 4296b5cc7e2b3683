import type { MetricsSampler, SandboxMetric } from "../../orchestrator/metrics.js";
import type { Store } from "../../store/index.js";
import { badRequest } from "../errors.js";
import type { Handler } from "../server.js";
import { ownedSandbox, teamOf } from "./access.js";
import { ownedBy } from "./present.js";

export interface SandboxMetricsRoutesOptions {
  store: Store;
  sampler: MetricsSampler;
}

/** Resource usage of sandboxes: a sandbox's history, and the latest sample of several. */
export function sandboxMetricsRoutes(o: SandboxMetricsRoutesOptions): Record<string, Handler> {
  return {
    getSandboxMetrics: async (r) => {
      const row = await ownedSandbox(o.store, r);
      const start = r.params.start as number | undefined;
      const end = r.params.end as number | undefined;
      if (start !== undefined && end !== undefined && start > end) {
        throw badRequest(`start (${start}) is after end (${end})`);
      }
      await o.sampler.latest(row);
      return { status: 200, body: o.sampler.history(row.id, { start, end }) };
    },
    listSandboxesMetrics: async (r) => {
      const team = teamOf(r);
      const sandboxes: Record<string, SandboxMetric> = {};
      // unknown ids, other teams' and paused sandboxes are left out, as the spec says
      for (const id of new Set(r.params.sandbox_ids as string[])) {
        const row = await o.store.sandboxes.get(id);
        if (!ownedBy(row, team) || row.state !== "running") continue;
        const metric = await o.sampler.latest(row);
        if (metric) sandboxes[id] = metric;
      }
      return { status: 200, body: { sandboxes } };
    },
  };
}
