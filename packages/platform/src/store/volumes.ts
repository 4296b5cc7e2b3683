import type { Kysely } from "kysely";
import type { Volume } from "../model/volume.js";
import type { Database, VolumesTable } from "./schema.js";

const decode = (row: VolumesTable): Volume => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  sizeMB: row.size_mb,
  token: row.token,
  createdAt: row.created_at,
  nodeId: row.node_id,
});

/** Volumes of teams; their files are the volume service's. */
export class VolumeStore {
  constructor(
    private readonly db: Kysely<Database>,
    /** The node this store speaks for: volumes it creates live on its disk. */
    private readonly nodeId: string,
  ) {}

  /** Inserts the volume; false when the team has one of that name already. */
  async insert(v: Volume): Promise<boolean> {
    const result = await this.db
      .insertInto("volumes")
      .values({
        id: v.id,
        team_id: v.teamId,
        name: v.name,
        size_mb: v.sizeMB,
        token: v.token,
        created_at: v.createdAt,
        node_id: this.nodeId,
      })
      .onConflict((oc) => oc.columns(["team_id", "name"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async get(id: string): Promise<Volume | undefined> {
    const row = await this.db.selectFrom("volumes").selectAll().where("id", "=", id).executeTakeFirst();
    return row && decode(row);
  }

  async byName(teamId: string, name: string): Promise<Volume | undefined> {
    const row = await this.db
      .selectFrom("volumes")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("name", "=", name)
      .executeTakeFirst();
    return row && decode(row);
  }

  /** The team's volumes, oldest first. */
  async list(teamId: string): Promise<Volume[]> {
    const rows = await this.db
      .selectFrom("volumes")
      .selectAll()
      .where("team_id", "=", teamId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(decode);
  }

  /** Every volume, for the host to find its files at start. */
  async all(): Promise<Volume[]> {
    return (await this.db.selectFrom("volumes").selectAll().execute()).map(decode);
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom("volumes").where("id", "=", id).execute();
  }
}
