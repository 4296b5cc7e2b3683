import type { Store } from "../store/index.js";
import { Registry } from "./metrics.js";

/** The sandbox proxy's live counters as these metrics read them (the proxy's `metrics`). */
export interface ProxyCounters {
  requests: number;
  active: number;
  upgrades: number;
  resumes: number;
  bytesFromClients: number;
  bytesToClients: number;
  responses: Record<number, number>;
  errors: Record<string, number>;
}

export interface PlatformMetricsSources {
  store: Store;
  /** The proxy's live counters, once it runs. */
  proxy(): Readonly<ProxyCounters> | undefined;
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

/** The platform's Prometheus metrics: API, sandboxes and proxy. */
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
  const proxyRequests = registry.counter(
    "x_proxy_requests_total",
    "Requests the sandbox proxy received, upgrades included.",
  );
  const proxyActive = registry.gauge(
    "x_proxy_active_exchanges",
    "Exchanges with sandboxes in flight (streams and tunnels included).",
  );
  const proxyUpgrades = registry.counter(
    "x_proxy_upgrades_total",
    "Connection upgrades (WebSocket and the like) through the proxy.",
  );
  const proxyResumes = registry.counter("x_proxy_resumes_total", "Paused sandboxes resumed by traffic.");
  const proxyBytes = registry.counter("x_proxy_bytes_total", "Body and tunnel bytes through the proxy.", [
    "direction",
  ]);
  const proxyResponses = registry.counter("x_proxy_responses_total", "Proxy responses by status code.", [
    "status",
  ]);
  const proxyErrors = registry.counter("x_proxy_errors_total", "Proxy errors and cut exchanges by kind.", [
    "kind",
  ]);

  registry.onCollect(async () => {
    const counts = await sources.store.sandboxes.countByState();
    for (const state of SANDBOX_STATES) sandboxes.set({ state }, counts[state] ?? 0);
    const proxy = sources.proxy();
    if (!proxy) return;
    proxyRequests.set({}, proxy.requests);
    proxyActive.set({}, proxy.active);
    proxyUpgrades.set({}, proxy.upgrades);
    proxyResumes.set({}, proxy.resumes);
    proxyBytes.set({ direction: "from_clients" }, proxy.bytesFromClients);
    proxyBytes.set({ direction: "to_clients" }, proxy.bytesToClients);
    for (const [status, n] of Object.entries(proxy.responses)) proxyResponses.set({ status }, n);
    for (const [kind, n] of Object.entries(proxy.errors)) proxyErrors.set({ kind }, n);
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
