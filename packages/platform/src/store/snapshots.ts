import type { Kysely } from "kysely";
import type { ListedSnapshot, Snapshot } from "../model/snapshot.js";
import { afterCursor, type KeysetCursor } from "./paging.js";
import type { Database, SnapshotsTable } from "./schema.js";

export interface SnapshotListFilter {
  teamId: string;
  sandboxId?: string;
  templateId?: string;
  buildId?: string;
  limit: number;
  /** Cursor: creation time and id of the last snapshot of the previous page. */
  after?: KeysetCursor;
}

const decode = (row: SnapshotsTable): Snapshot => ({
  id: row.id,
  teamId: row.team_id,
  sandboxId: row.sandbox_id,
  templateId: row.template_id,
  buildId: row.build_id,
  createdAt: row.created_at,
});

/** Snapshots taken of sandboxes: each one is a build of a snapshot template. */
export class SnapshotStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(s: Snapshot): Promise<void> {
    await this.db
      .insertInto("snapshots")
      .values({
        id: s.id,
        team_id: s.teamId,
        sandbox_id: s.sandboxId,
        template_id: s.templateId,
        build_id: s.buildId,
        created_at: s.createdAt,
      })
      .execute();
  }

  /** How many snapshots the team holds, reachable by a tag or not (each keeps its layers). */
  async count(teamId: string): Promise<number> {
    const row = await this.db
      .selectFrom("snapshots")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("team_id", "=", teamId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /**
   * Newest first. Only snapshots a tag still points at are listed: a snapshot whose tag moved
   * on to a newer snapshot of the same name is no longer reachable by name.
   */
  async list(filter: SnapshotListFilter): Promise<ListedSnapshot[]> {
    let q = this.db
      .selectFrom("snapshots")
      .selectAll()
      .where("team_id", "=", filter.teamId)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("template_tags")
            .select("tag")
            .whereRef("template_tags.build_id", "=", "snapshots.build_id"),
        ),
      );
    if (filter.sandboxId) q = q.where("sandbox_id", "=", filter.sandboxId);
    if (filter.templateId) q = q.where("template_id", "=", filter.templateId);
    if (filter.buildId) q = q.where("build_id", "=", filter.buildId);
    const after = filter.after;
    if (after) q = q.where(afterCursor("created_at", after));
    const rows = await q.orderBy("created_at", "desc").orderBy("id").limit(filter.limit).execute();
    if (rows.length === 0) return [];
    const tags = await this.db
      .selectFrom("template_tags")
      .select(["build_id", "tag"])
      .where(
        "build_id",
        "in",
        rows.map((r) => r.build_id),
      )
      .orderBy("tag")
      .execute();
    return rows.map((r) => ({
      ...decode(r),
      tags: tags.filter((t) => t.build_id === r.build_id).map((t) => t.tag),
    }));
  }
}
