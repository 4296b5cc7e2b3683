import type { Schemas } from "@x/platform-client";
import type { ClusterNode, Store } from "../../store/index.js";
import type { HandlersFor } from "../handler.js";

/** A node as teams see it: its state and capacity, never its addresses. */
function presentNode(n: ClusterNode): Schemas["ClusterNode"] {
  const c = n.capacity;
  return {
    nodeID: n.id,
    state: n.state,
    startedAt: n.startedAt,
    heartbeatAt: n.heartbeatAt,
    ...(n.downAt ? { downAt: n.downAt } : {}),
    capacity: {
      cpus: c.cpus,
      memoryTotalMB: c.memoryTotalMB,
      memoryFreeMB: c.memoryFreeMB,
      sandboxes: c.sandboxes,
      maxSandboxes: c.maxSandboxes,
      load: c.load,
      runtimes: c.runtimes,
      warmPoolMembers: Object.values(c.pool).reduce((a, b) => a + b, 0),
    },
  };
}

/** The cluster's nodes (none under `x serve`), for the console's cluster page. */
export function nodeRoutes(store: Store): HandlersFor<"listNodes"> {
  return {
    listNodes: async () => ({ status: 200, body: (await store.nodes.list()).map(presentNode) }),
  };
}
