import { type Kysely, sql } from "kysely";
import { nowIso } from "../lib/ids.js";
import type { Database, NodesTable } from "./schema.js";

export type NodeState = NodesTable["state"];

/** What a node reports of itself with each heartbeat; placement decides from it. */
export interface NodeCapacity {
  cpus: number;
  memoryTotalMB: number;
  /** The host's available memory (MemAvailable) less the node's reserve. */
  memoryFreeMB: number;
  /** Sandboxes running or starting on it. */
  sandboxes: number;
  /** It takes no more past this many. */
  maxSandboxes: number;
  /** One-minute load average. */
  load: number;
  runtimes: string[];
  /** Ready warm-pool members by template build id. */
  pool: Record<string, number>;
}

export interface ClusterNode {
  id: string;
  state: NodeState;
  apiUrl: string;
  trafficUrl: string;
  startedAt: string;
  heartbeatAt: string;
  downAt?: string;
  capacity: NodeCapacity;
}

const decode = (row: NodesTable): ClusterNode => ({
  id: row.id,
  state: row.state,
  apiUrl: row.api_url,
  trafficUrl: row.traffic_url,
  startedAt: row.started_at,
  heartbeatAt: row.heartbeat_at,
  ...(row.down_at ? { downAt: row.down_at } : {}),
  capacity: JSON.parse(row.capacity) as NodeCapacity,
});

/** The cluster's nodes: registration, heartbeats, drain, and marking down those gone silent. */
export class NodeStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** A node starting (or starting again): ready, at these addresses. A drained node stays draining. */
  async register(n: {
    id: string;
    apiUrl: string;
    trafficUrl: string;
    capacity: NodeCapacity;
  }): Promise<void> {
    const now = nowIso();
    const fields = {
      api_url: n.apiUrl,
      traffic_url: n.trafficUrl,
      started_at: now,
      heartbeat_at: now,
      down_at: null,
      capacity: JSON.stringify(n.capacity),
    };
    await this.db
      .insertInto("nodes")
      .values({ id: n.id, state: "ready", ...fields })
      .onConflict((oc) =>
        oc.column("id").doUpdateSet({
          state: sql`case when nodes.state = 'draining' then 'draining' else 'ready' end`,
          ...fields,
        }),
      )
      .execute();
  }

  /** Records a heartbeat; false when the node had been marked down meanwhile (it must reconcile). */
  async heartbeat(id: string, capacity: NodeCapacity): Promise<boolean> {
    const result = await this.db
      .updateTable("nodes")
      .set({ heartbeat_at: nowIso(), capacity: JSON.stringify(capacity) })
      .where("id", "=", id)
      .where("state", "!=", "down")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  async get(id: string): Promise<ClusterNode | undefined> {
    const row = await this.db.selectFrom("nodes").selectAll().where("id", "=", id).executeTakeFirst();
    return row && decode(row);
  }

  async list(): Promise<ClusterNode[]> {
    return (await this.db.selectFrom("nodes").selectAll().orderBy("id").execute()).map(decode);
  }

  /** Drain (no new sandboxes, running ones kept) or back to ready; false for an unknown or down node. */
  async setState(id: string, state: "ready" | "draining"): Promise<boolean> {
    const result = await this.db
      .updateTable("nodes")
      .set({ state })
      .where("id", "=", id)
      .where("state", "!=", "down")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** A node leaving for good: its row goes (refused while it holds sandboxes not killed). */
  /**
   * A ready node that is starting again says it is down until it registers (it answers
   * nothing yet). A draining one stays draining: no create goes there either way.
   */
  async markStarting(id: string): Promise<void> {
    await this.db
      .updateTable("nodes")
      .set({ state: "down", down_at: nowIso() })
      .where("id", "=", id)
      .where("state", "=", "ready")
      .execute();
  }

  async remove(id: string): Promise<void> {
    await this.db.deleteFrom("nodes").where("id", "=", id).execute();
  }

  /**
   * Marks down the nodes whose last heartbeat is older than `before`, and returns them. One
   * statement: of several apis watching at once, each node is marked by exactly one.
   */
  async markSilentDown(before: string): Promise<string[]> {
    const rows = await this.db
      .updateTable("nodes")
      .set({ state: "down", down_at: nowIso() })
      .where("state", "!=", "down")
      .where("heartbeat_at", "<", before)
      .returning("id")
      .execute();
    return rows.map((r) => r.id);
  }
}
