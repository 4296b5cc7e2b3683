import type { Store } from "../store/index.js";
import { Registry } from "./metrics.js";

export interface PlatformMetricsSources {
  store: Store;
}

export interface PlatformMetrics {
  registry: Registry;
  /** The API server's observe hook. */
  observeApiRequest(operation: string, status: number, seconds: number): void;
  observeSandboxCreate(runtime: string, seconds: number): void;
}

const API_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];
const CREATE_BUCKETS = [0.03, 0.06, 0.12, 0.25, 0.35, 0.5, 1, 2, 5, 10, 30];
const SANDBOX_STATES = ["starting", "running", "paused"] as const;

/** The platform's Prometheus metrics of the API and of sandboxes (the proxy adds its own: proxy/metrics.ts). */
export function createPlatformMetrics(sources: PlatformMetricsSources): PlatformMetrics {
  const registry = new Registry();
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
  const createDuration = registry.histogram(
    "x_sandbox_create_duration_seconds",
    "Time from a create request to a sandbox whose agent answers, by runtime.",
    ["runtime"],
    CREATE_BUCKETS,
  );
  const sandboxes = registry.gauge("x_sandboxes", "Sandboxes not killed, by state.", ["state"]);
  registry.onCollect(async () => {
    const counts = await sources.store.sandboxes.countByState();
    for (const state of SANDBOX_STATES) sandboxes.set({ state }, counts[state] ?? 0);
  });

  return {
    registry,
    observeApiRequest: (operation, status, seconds) => {
      apiRequests.inc({ operation, status: String(status) });
      apiDuration.observe({ operation }, seconds);
    },
    observeSandboxCreate: (runtime, seconds) => createDuration.observe({ runtime }, seconds),
  };
}
