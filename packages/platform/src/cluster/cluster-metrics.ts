import { Registry } from "../observability/metrics.js";
import { apiRequestMetrics } from "../observability/platform-metrics.js";
import type { Store } from "../store/index.js";

const NODE_STATES = ["ready", "draining", "down"] as const;

/** The `x api` role's Prometheus metrics: the nodes as the catalog has them, and what it routed where. */
export function createClusterMetrics(store: Store): {
  registry: Registry;
  observeRoute(to: string, status: number): void;
  observeRequest(operation: string, status: number, seconds: number): void;
} {
  const registry = new Registry();
  const nodes = registry.gauge("x_cluster_nodes", "Nodes of the cluster, by state.", ["state"]);
  const byNode = ["node"];
  const sandboxes = registry.gauge(
    "x_cluster_node_sandboxes",
    "Sandboxes running on a node, as its last heartbeat said.",
    byNode,
  );
  const maxSandboxes = registry.gauge(
    "x_cluster_node_max_sandboxes",
    "Sandboxes a node takes at most.",
    byNode,
  );
  const memoryFree = registry.gauge(
    "x_cluster_node_memory_free_mb",
    "A node's free memory less its reserve (MB).",
    byNode,
  );
  const poolReady = registry.gauge("x_cluster_node_pool_ready", "Ready warm-pool members on a node.", byNode);
  const heartbeatAge = registry.gauge(
    "x_cluster_node_heartbeat_age_seconds",
    "Time since a node's last heartbeat.",
    byNode,
  );
  const routed = registry.counter(
    "x_cluster_api_requests_total",
    "Requests this api answered, by how they were routed (routes.ts) and status.",
    ["to", "status"],
  );
  // as x serve and x node name them, so one dashboard reads every role's API
  const observeRequest = apiRequestMetrics(registry);
  registry.onCollect(async () => {
    const list = await store.nodes.list();
    for (const state of NODE_STATES) nodes.set({ state }, list.filter((n) => n.state === state).length);
    for (const gauge of [sandboxes, maxSandboxes, memoryFree, poolReady, heartbeatAge]) gauge.clear();
    for (const n of list) {
      const node = { node: n.id };
      sandboxes.set(node, n.capacity.sandboxes);
      maxSandboxes.set(node, n.capacity.maxSandboxes);
      memoryFree.set(node, n.capacity.memoryFreeMB);
      poolReady.set(
        node,
        Object.values(n.capacity.pool).reduce((a, b) => a + b, 0),
      );
      heartbeatAge.set(node, Math.max(0, (Date.now() - Date.parse(n.heartbeatAt)) / 1000));
    }
  });
  return {
    registry,
    observeRoute: (to, status) => routed.inc({ to, status: String(status) }),
    observeRequest,
  };
}
