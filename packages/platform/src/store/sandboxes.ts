import type { Kysely } from "kysely";
import { afterCursor } from "./paging.js";
import type { Database, NewSandboxRow, SandboxRow, SandboxUpdate } from "./schema.js";

export interface SandboxListFilter {
  teamId: string;
  states?: SandboxRow["state"][];
  metadata?: Record<string, string>;
  limit: number;
  /** Cursor: started_at and id of the last row of the previous page. */
  after?: { startedAt: string; id: string };
}

/** Sandboxes as the platform knows them; the orchestrator keeps the live side. */
export class SandboxStore {
  constructor(private readonly db: Kysely<Database>) {}

  async insert(row: NewSandboxRow): Promise<void> {
    await this.db.insertInto("sandboxes").values(row).execute();
  }

  async get(id: string): Promise<SandboxRow | undefined> {
    return this.db.selectFrom("sandboxes").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async update(id: string, changes: SandboxUpdate): Promise<void> {
    await this.db.updateTable("sandboxes").set(changes).where("id", "=", id).execute();
  }

  /** Sandboxes not killed, for the orchestrator to adopt after a restart. */
  async live(): Promise<SandboxRow[]> {
    return this.db.selectFrom("sandboxes").selectAll().where("state", "!=", "killed").execute();
  }

  async countLive(teamId: string): Promise<number> {
    const row = await this.db
      .selectFrom("sandboxes")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("team_id", "=", teamId)
      .where("state", "in", ["starting", "running"])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Sandboxes not killed, counted by state (for the platform's gauges). */
  async countByState(): Promise<Partial<Record<SandboxRow["state"], number>>> {
    const rows = await this.db
      .selectFrom("sandboxes")
      .select((eb) => ["state", eb.fn.countAll<string | number>().as("n")])
      .where("state", "!=", "killed")
      .groupBy("state")
      .execute();
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** Newest first. Metadata is matched in memory: it is JSON text in both dialects. */
  async list(filter: SandboxListFilter): Promise<SandboxRow[]> {
    let q = this.db.selectFrom("sandboxes").selectAll().where("team_id", "=", filter.teamId);
    q = q.where("state", "in", filter.states?.length ? filter.states : ["running", "paused"]);
    const after = filter.after;
    if (after) q = q.where(afterCursor("started_at", { time: after.startedAt, id: after.id }));
    q = q.orderBy("started_at", "desc").orderBy("id");
    const wanted = Object.entries(filter.metadata ?? {});
    if (wanted.length === 0) return q.limit(filter.limit).execute();
    const out: SandboxRow[] = [];
    for (const row of await q.execute()) {
      const metadata = JSON.parse(row.metadata) as Record<string, string>;
      if (wanted.every(([k, v]) => metadata[k] === v)) out.push(row);
      if (out.length === filter.limit) break;
    }
    return out;
  }
}
