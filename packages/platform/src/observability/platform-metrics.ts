import type { Store } from "../store/index.js";
import { Registry } from "./metrics.js";

/** One warm pool as these metrics read it (the orchestrator's `WarmPool.stats()`). */
export interface PoolCounts {
  templateId: string;
  runtime: string;
  ready: number;
  booting: number;
  waiting: number;
  target: number;
  hits: number;
  misses: number;
}

/** Egress decisions so far, by verdict and protocol (the decision log's totals). */
export type EgressCounts = ReadonlyArray<{ verdict: string; protocol: string; count: number }>;

export interface PlatformMetricsSources {
  store: Store;
  pool?(): PoolCounts[];
  egress?(): EgressCounts;
}

export interface PlatformMetrics {
  registry: Registry;
  /** The API server's observe hook. */
  observeApiRequest(operation: string, status: number, seconds: number): void;
  observeSandboxCreate(runtime: string, seconds: number): void;
  /** A sandbox boot (for a create or a pool), how long it took and whether it worked. */
  observeBoot(runtime: string, seconds: number, ok: boolean): void;
}

const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const CREATE_BUCKETS = [0.03, 0.06, 0.12, 0.25, 0.35, 0.5, 1, 2, 5, 10, 30];
const SANDBOX_STATES = ["starting", "running", "paused"] as const;

/**
 * The API's request counter and duration histogram, as every role that serves the API names
 * them (x serve, x node, x api), so one dashboard reads them all; returns their observer.
 */
export function apiRequestMetrics(
  registry: Registry,
): (operation: string, status: number, seconds: number) => void {
  const apiRequests = registry.counter("x_api_requests_total", "API requests by operation and status.", [
    "operation",
    "status",
  ]);
  const apiDuration = registry.histogram(
    "x_api_request_duration_seconds",
    "Time to answer API requests, by operation.",
    ["operation"],
    API_BUCKETS,
  );
  return (operation, status, seconds) => {
    apiRequests.inc({ operation, status: String(status) });
    apiDuration.observe({ operation }, seconds);
  };
}

/** The platform's Prometheus metrics of the API and of sandboxes (the proxy adds its own: proxy/metrics.ts). */
export function createPlatformMetrics(sources: PlatformMetricsSources): PlatformMetrics {
  const registry = new Registry();
  const observeApiRequest = apiRequestMetrics(registry);
  const createDuration = registry.histogram(
    "x_sandbox_create_duration_seconds",
    "Time from a create request to a sandbox whose agent answers, by runtime.",
    ["runtime"],
    CREATE_BUCKETS,
  );
  const sandboxes = registry.gauge("x_sandboxes", "Sandboxes not killed, by state.", ["state"]);
  const bootDuration = registry.histogram(
    "x_sandbox_boot_duration_seconds",
    "Time a sandbox took to boot (envd answering), waiting for a boot slot included, by runtime and outcome.",
    ["runtime", "outcome"],
    CREATE_BUCKETS,
  );
  const poolLabels = ["template", "runtime"];
  const poolReady = registry.gauge("x_warm_pool_ready", "Warm pool members ready to be taken.", poolLabels);
  const poolBooting = registry.gauge("x_warm_pool_booting", "Warm pool members booting.", poolLabels);
  const poolWaiting = registry.gauge("x_warm_pool_waiting", "Creates waiting for a member.", poolLabels);
  const poolTarget = registry.gauge(
    "x_warm_pool_target",
    "Members a pool keeps ready now, sized to demand between its minimum and maximum.",
    poolLabels,
  );
  const poolTakes = registry.counter(
    "x_warm_pool_takes_total",
    "Creates that found a member ready (hit) or not (miss).",
    [...poolLabels, "result"],
  );
  const egressDecisions = registry.counter(
    "x_egress_decisions_total",
    "Egress decisions about sandboxes' traffic (the decision log's), by verdict and protocol (dns: name lookups).",
    ["verdict", "protocol"],
  );
  registry.onCollect(async () => {
    for (const e of sources.egress?.() ?? []) {
      egressDecisions.set({ verdict: e.verdict, protocol: e.protocol }, e.count);
    }
    const counts = await sources.store.sandboxes.countByState();
    for (const state of SANDBOX_STATES) sandboxes.set({ state }, counts[state] ?? 0);
    const pools = sources.pool?.() ?? [];
    for (const gauge of [poolReady, poolBooting, poolWaiting, poolTarget]) gauge.clear();
    for (const p of pools) {
      const labels = { template: p.templateId, runtime: p.runtime };
      poolReady.set(labels, p.ready);
      poolBooting.set(labels, p.booting);
      poolWaiting.set(labels, p.waiting);
      poolTarget.set(labels, p.target);
      poolTakes.set({ ...labels, result: "hit" }, p.hits);
      poolTakes.set({ ...labels, result: "miss" }, p.misses);
    }
  });

  return {
    registry,
    observeApiRequest,
    observeSandboxCreate: (runtime, seconds) => createDuration.observe({ runtime }, seconds),
    observeBoot: (runtime, seconds, ok) =>
      bootDuration.observe({ runtime, outcome: ok ? "ok" : "failed" }, seconds),
  };
}
