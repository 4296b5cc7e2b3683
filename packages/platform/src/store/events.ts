import type { Kysely } from "kysely";
import { newTimeOrderedId, nowIso } from "../lib/ids.js";
import type { Database } from "./schema.js";

export interface PlatformEvent {
  id: string;
  at: string;
  teamId: string | null;
  sandboxId: string | null;
  type: string;
  data: Record<string, unknown>;
}

/** An append-only log of what happened to sandboxes and templates (also the sandbox logs). */
export class EventStore {
  constructor(private readonly db: Kysely<Database>) {}

  async record(
    type: string,
    fields: { teamId?: string; sandboxId?: string; data?: Record<string, unknown> },
  ): Promise<void> {
    await this.db
      .insertInto("events")
      .values({
        id: newTimeOrderedId(),
        at: nowIso(),
        team_id: fields.teamId ?? null,
        sandbox_id: fields.sandboxId ?? null,
        type,
        data: JSON.stringify(fields.data ?? {}),
      })
      .execute();
  }

  /** A sandbox's events in [from, to] (ISO times, inclusive), in time order or newest first. */
  async forSandbox(
    sandboxId: string,
    opts: { from?: string; to?: string; order?: "asc" | "desc"; limit?: number } = {},
  ): Promise<PlatformEvent[]> {
    let q = this.db.selectFrom("events").selectAll().where("sandbox_id", "=", sandboxId);
    if (opts.from) q = q.where("at", ">=", opts.from);
    if (opts.to) q = q.where("at", "<=", opts.to);
    const rows = await q
      .orderBy("id", opts.order ?? "asc")
      .limit(opts.limit ?? 1000)
      .execute();
    return rows.map((r) => ({
      id: r.id,
      at: r.at,
      teamId: r.team_id,
      sandboxId: r.sandbox_id,
      type: r.type,
      data: JSON.parse(r.data) as Record<string, unknown>,
    }));
  }
}
