import type { Kysely } from "kysely";
import { newId, nowIso } from "../lib/ids.js";
import type { Database } from "./schema.js";

/**
 * Sandboxes an api has sent to a node and not yet seen created. Placement reads them with the
 * nodes' heartbeats under one PostgreSQL advisory lock (`Store.locked`), so concurrent apis
 * never hand a node more than its headroom.
 */
export class PlacementStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Memory (MB) and count of placements in flight, by node (expired ones left out). */
  async pending(): Promise<Map<string, { memoryMB: number; count: number }>> {
    const rows = await this.db
      .selectFrom("placements")
      .where("expires_at", ">=", nowIso())
      .select((eb) => [
        "node_id",
        eb.fn.sum<string | number>("memory_mb").as("memory"),
        eb.fn.countAll<string | number>().as("n"),
      ])
      .groupBy("node_id")
      .execute();
    return new Map(rows.map((r) => [r.node_id, { memoryMB: Number(r.memory), count: Number(r.n) }]));
  }

  async add(nodeId: string, memoryMB: number, ttlMs: number): Promise<string> {
    const id = newId();
    await this.db
      .insertInto("placements")
      .values({ id, node_id: nodeId, memory_mb: memoryMB, expires_at: nowIso(new Date(Date.now() + ttlMs)) })
      .execute();
    return id;
  }

  /** Ends a placement, and any that expired (an api that died before releasing its own). */
  async release(id: string): Promise<void> {
    await this.db
      .deleteFrom("placements")
      .where((eb) => eb.or([eb("id", "=", id), eb("expires_at", "<", nowIso())]))
      .execute();
  }
}
