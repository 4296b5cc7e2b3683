import type { Registry } from "../observability/metrics.js";
import type { ProxyMetrics } from "./types.js";

/** The proxy's live counters as Prometheus families of `registry`, read at each scrape. */
export function registerProxyMetrics(
  registry: Registry,
  metrics: () => Readonly<ProxyMetrics> | undefined,
): void {
  const requests = registry.counter(
    "x_proxy_requests_total",
    "Requests the sandbox proxy received, upgrades included.",
  );
  const active = registry.gauge(
    "x_proxy_active_exchanges",
    "Exchanges with sandboxes in flight (streams and tunnels included).",
  );
  const upgrades = registry.counter(
    "x_proxy_upgrades_total",
    "Connection upgrades (WebSocket and the like) through the proxy.",
  );
  const resumes = registry.counter("x_proxy_resumes_total", "Paused sandboxes resumed by traffic.");
  const bytes = registry.counter("x_proxy_bytes_total", "Body and tunnel bytes through the proxy.", [
    "direction",
  ]);
  const responses = registry.counter("x_proxy_responses_total", "Proxy responses by status code.", [
    "status",
  ]);
  const errors = registry.counter("x_proxy_errors_total", "Proxy errors and cut exchanges by kind.", [
    "kind",
  ]);
  registry.onCollect(() => {
    const m = metrics();
    if (!m) return;
    requests.set({}, m.requests);
    active.set({}, m.active);
    upgrades.set({}, m.upgrades);
    resumes.set({}, m.resumes);
    bytes.set({ direction: "from_clients" }, m.bytesFromClients);
    bytes.set({ direction: "to_clients" }, m.bytesToClients);
    for (const [status, n] of Object.entries(m.responses)) responses.set({ status }, n);
    for (const [kind, n] of Object.entries(m.errors)) errors.set({ kind }, n);
  });
}

/** Counters at zero, for a new proxy. */
export function newProxyMetrics(): ProxyMetrics {
  return {
    requests: 0,
    active: 0,
    upgrades: 0,
    resumes: 0,
    bytesFromClients: 0,
    bytesToClients: 0,
    responses: {},
    errors: {
      no_route: 0,
      bad_request: 0,
      sandbox_not_found: 0,
      sandbox_paused: 0,
      resume_failed: 0,
      sandbox_broken: 0,
      sandbox_lost: 0,
      forbidden: 0,
      rate_limited: 0,
      resolver_failed: 0,
      port_closed: 0,
      upstream_unreachable: 0,
      upstream_aborted: 0,
      client_aborted: 0,
      cut: 0,
    },
  };
}
