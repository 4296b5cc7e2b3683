import { invalid } from "../../model/errors.js";
import type { MetricsSampler, SandboxMetric } from "../../observability/metrics-sampler.js";
import type { Store } from "../../store/index.js";
import type { HandlersFor } from "../handler.js";
import { ownedBy, ownedSandbox, teamOf } from "./access.js";

export interface SandboxMetricsRoutesOptions {
  store: Store;
  sampler: MetricsSampler;
}

/** Resource usage of sandboxes: a sandbox's history, and the latest sample of several. */
export function sandboxMetricsRoutes(
  o: SandboxMetricsRoutesOptions,
): HandlersFor<"getSandboxMetrics" | "listSandboxesMetrics"> {
  return {
    getSandboxMetrics: async (r) => {
      const sandbox = await ownedSandbox(o.store, r);
      const { start, end } = r.params;
      if (start !== undefined && end !== undefined && start > end) {
        throw invalid(`start (${start}) is after end (${end})`);
      }
      await o.sampler.latest(sandbox);
      return { status: 200, body: o.sampler.history(sandbox.id, { start, end }) };
    },
    listSandboxesMetrics: async (r) => {
      const team = teamOf(r);
      const sandboxes: Record<string, SandboxMetric> = {};
      // unknown ids, other teams' and paused sandboxes are left out, as the spec says
      for (const id of new Set(r.params.sandbox_ids)) {
        const sandbox = await o.store.sandboxes.get(id);
        if (!ownedBy(sandbox, team) || sandbox.state !== "running") continue;
        const metric = await o.sampler.latest(sandbox);
        if (metric) sandboxes[id] = metric;
      }
      return { status: 200, body: { sandboxes } };
    },
  };
}
