/**
 * Which node takes a new sandbox (or volume, or build). Decided under the cluster's placement
 * lock from the nodes' last heartbeats and the placements other apis have in flight, so two
 * apis deciding at once never both spend the same headroom.
 */
import { unavailable } from "../model/errors.js";
import type { ClusterNode, Store } from "../store/index.js";

/** A placement not confirmed by then stops counting (a create takes seconds, not minutes). */
const PLACEMENT_TTL_MS = 120_000;

export interface PlacementRequest {
  memoryMB: number;
  runtime?: string;
  /** The template build: a node with a ready pool member for it, or its layers, goes first. */
  buildId?: string;
  layers?: string[];
  /** Only this node will do (the node of the volumes it mounts). */
  nodeId?: string;
}

export interface Placement {
  node: ClusterNode;
  /** Release once the node answered: its heartbeat counts the sandbox from then on. */
  release(): Promise<void>;
}

/** Nodes whose heartbeat is older than this are not offered work, even before they are marked down. */
export function freshAfter(timeoutMs: number): string {
  return new Date(Date.now() - timeoutMs).toISOString();
}

/** Why a node cannot take the request, or undefined when it can. */
function refusal(
  node: ClusterNode,
  req: PlacementRequest,
  pending: { memoryMB: number; count: number } | undefined,
  fresh: string,
): string | undefined {
  if (node.state !== "ready") return node.state;
  if (node.heartbeatAt < fresh) return "not heard from lately";
  const c = node.capacity;
  if (req.runtime && !c.runtimes.includes(req.runtime)) return `no ${req.runtime}`;
  const sandboxes = c.sandboxes + (pending?.count ?? 0);
  if (sandboxes >= c.maxSandboxes) return `full (${c.maxSandboxes} sandboxes)`;
  if (c.memoryFreeMB - (pending?.memoryMB ?? 0) < req.memoryMB)
    return `out of memory (${c.memoryFreeMB} MB free)`;
  return undefined;
}

/**
 * Higher is better: a ready pool member (no boot) first, then the layers already there (no
 * fetch, worth two sandboxes per core of load), then the least loaded (sandboxes and load average per
 * core, then free memory), which spreads work.
 */
function score(node: ClusterNode, req: PlacementRequest, held: number, pendingCount: number): number {
  const c = node.capacity;
  const poolHit = req.buildId && (c.pool[req.buildId] ?? 0) > pendingCount ? 1 : 0;
  const layersHere = req.layers?.length ? held / req.layers.length : 0;
  // sandboxes per core, and how busy the cores are (the load average per core)
  const load = (c.sandboxes + pendingCount + c.load) / Math.max(1, c.cpus);
  return poolHit * 1000 + layersHere * 20 - load * 10 + c.memoryFreeMB / 1e6;
}

/** Chooses a node and records the placement; 503 naming each node's reason when none can. */
export async function place(
  store: Store,
  req: PlacementRequest,
  heartbeatTimeoutMs: number,
): Promise<Placement> {
  const chosen = await store.locked("placement", async (catalog) => {
    const nodes = await catalog.nodes.list();
    const pending = await catalog.placements.pending();
    const fresh = freshAfter(heartbeatTimeoutMs);
    const held = req.layers?.length ? await catalog.layers.heldByNode(req.layers) : new Map<string, number>();
    const reasons: string[] = [];
    let best: { node: ClusterNode; score: number } | undefined;
    for (const node of nodes) {
      if (req.nodeId && node.id !== req.nodeId) continue;
      const why = refusal(node, req, pending.get(node.id), fresh);
      if (why) {
        reasons.push(`${node.id}: ${why}`);
        continue;
      }
      const s = score(node, req, held.get(node.id) ?? 0, pending.get(node.id)?.count ?? 0);
      if (!best || s > best.score) best = { node, score: s };
    }
    if (!best) {
      const where = req.nodeId ? `node ${req.nodeId} (where its volumes are)` : "no node";
      const detail = reasons.length > 0 ? reasons.join("; ") : "no node has registered";
      throw unavailable(`${where} can take this sandbox now (${detail}); try again later`, 5);
    }
    return {
      node: best.node,
      id: await catalog.placements.add(best.node.id, req.memoryMB, PLACEMENT_TTL_MS),
    };
  });
  return { node: chosen.node, release: () => store.placements.release(chosen.id) };
}
