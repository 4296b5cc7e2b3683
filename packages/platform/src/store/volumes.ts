import type { Kysely } from "kysely";
import type { Volume } from "../model/volume.js";
import type { Database, VolumesTable } from "./schema.js";
import { binding, type Sealing } from "./sealing.js";

const decode = (row: VolumesTable, sealing: Sealing): Volume => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  sizeMB: row.size_mb,
  token: sealing.open(row.token, binding.volumeToken(row.id)),
  createdAt: row.created_at,
  nodeId: row.node_id,
});

/** Volumes of teams; their files are the volume service's. */
export class VolumeStore {
  private readonly decode: (row: VolumesTable) => Volume;

  constructor(
    private readonly db: Kysely<Database>,
    /** The node this store speaks for: volumes it creates live on its disk. */
    private readonly nodeId: string,
    /** Tokens are sealed at rest (store/sealing.ts). */
    private readonly sealing: Sealing,
  ) {
    this.decode = (row) => decode(row, sealing);
  }

  /** The node that holds a volume's files, without its token: any process may ask. */
  async nodeOf(id: string): Promise<string | undefined> {
    const row = await this.db.selectFrom("volumes").select("node_id").where("id", "=", id).executeTakeFirst();
    return row?.node_id;
  }

  /** Inserts the volume; false when the team has one of that name already. */
  async insert(v: Volume): Promise<boolean> {
    const result = await this.db
      .insertInto("volumes")
      .values({
        id: v.id,
        team_id: v.teamId,
        name: v.name,
        size_mb: v.sizeMB,
        token: this.sealing.seal(v.token, binding.volumeToken(v.id)),
        created_at: v.createdAt,
        node_id: this.nodeId,
      })
      .onConflict((oc) => oc.columns(["team_id", "name"]).doNothing())
      .executeTakeFirst();
    return Number(result.numInsertedOrUpdatedRows ?? 0) > 0;
  }

  async get(id: string): Promise<Volume | undefined> {
    const row = await this.db.selectFrom("volumes").selectAll().where("id", "=", id).executeTakeFirst();
    return row && this.decode(row);
  }

  async byName(teamId: string, name: string): Promise<Volume | undefined> {
    const row = await this.db
      .selectFrom("volumes")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("name", "=", name)
      .executeTakeFirst();
    return row && this.decode(row);
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
    return rows.map(this.decode);
  }

  /** How many volumes the team holds. */
  async count(teamId: string): Promise<number> {
    const row = await this.db
      .selectFrom("volumes")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("team_id", "=", teamId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Every volume, for the host to find its files at start. */
  async all(): Promise<Volume[]> {
    return (await this.db.selectFrom("volumes").selectAll().execute()).map(this.decode);
  }

  async delete(id: string): Promise<void> {
    await this.db.deleteFrom("volumes").where("id", "=", id).execute();
  }
}
