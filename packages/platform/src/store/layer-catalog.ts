import type { Kysely } from "kysely";
import { nowIso } from "../lib/ids.js";
import type { Database } from "./schema.js";

export interface LayerRecord {
  /** As builds name it: relative to a data directory (`layers/<name>`, `images/…/rootfs`). */
  path: string;
  /** `sha256:<hex>` of the layer's canonical tar stream. */
  digest: string;
  bytes: number;
}

/**
 * Which layers exist, their content digest, and which nodes hold a copy: a node that lacks a
 * layer fetches it from one that has it and checks the digest.
 */
export class LayerCatalog {
  constructor(private readonly db: Kysely<Database>) {}

  async get(path: string): Promise<LayerRecord | undefined> {
    return this.db
      .selectFrom("layers")
      .select(["path", "digest", "bytes"])
      .where("path", "=", path)
      .executeTakeFirst();
  }

  /** Records a layer and that `nodeId` holds it. The first digest recorded for a path stays. */
  async publish(layer: LayerRecord, nodeId: string): Promise<LayerRecord> {
    await this.db
      .insertInto("layers")
      .values({ ...layer, created_at: nowIso() })
      .onConflict((oc) => oc.column("path").doNothing())
      .execute();
    await this.addCopy(layer.path, nodeId);
    return (await this.get(layer.path)) ?? layer;
  }

  async addCopy(path: string, nodeId: string): Promise<void> {
    await this.db
      .insertInto("layer_copies")
      .values({ path, node_id: nodeId })
      .onConflict((oc) => oc.columns(["path", "node_id"]).doNothing())
      .execute();
  }

  async dropCopy(path: string, nodeId: string): Promise<void> {
    await this.db.deleteFrom("layer_copies").where("path", "=", path).where("node_id", "=", nodeId).execute();
  }

  /** Nodes that hold the layer. */
  async holders(path: string): Promise<string[]> {
    const rows = await this.db
      .selectFrom("layer_copies")
      .select("node_id")
      .where("path", "=", path)
      .execute();
    return rows.map((r) => r.node_id);
  }

  /** How many of these layers each node holds. */
  async heldByNode(paths: string[]): Promise<Map<string, number>> {
    if (paths.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("layer_copies")
      .select((eb) => ["node_id", eb.fn.countAll<string | number>().as("n")])
      .where("path", "in", paths)
      .groupBy("node_id")
      .execute();
    return new Map(rows.map((r) => [r.node_id, Number(r.n)]));
  }
}
