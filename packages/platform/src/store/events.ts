import type { Kysely } from "kysely";
import { newTimeOrderedId, nowIso } from "../lib/ids.js";
import type { Database, EventsTable } from "./schema.js";

export interface PlatformEvent {
  id: string;
  at: string;
  teamId: string | null;
  sandboxId: string | null;
  type: string;
  data: Record<string, unknown>;
}

const decodeEvent = (r: EventsTable): PlatformEvent => ({
  id: r.id,
  at: r.at,
  teamId: r.team_id,
  sandboxId: r.sandbox_id,
  type: r.type,
  data: JSON.parse(r.data) as Record<string, unknown>,
});

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

  /**
   * The events of the given types of a team's sandboxes that lived in [from, to] (ISO times), from
   * their first event up to `to`, in time order: enough to replay which ran when.
   */
  async ofTeamSandboxesLivingIn(
    teamId: string,
    types: readonly string[],
    range: { from: string; to: string },
  ): Promise<PlatformEvent[]> {
    const rows = await this.db
      .selectFrom("events")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("type", "in", [...types])
      .where("at", "<=", range.to)
      .where("sandbox_id", "in", (eb) =>
        eb
          .selectFrom("sandboxes")
          .select("id")
          .where("team_id", "=", teamId)
          .where("started_at", "<=", range.to)
          .where((w) => w.or([w("killed_at", "is", null), w("killed_at", ">=", range.from)])),
      )
      .orderBy("id", "asc")
      .execute();
    return rows.map(decodeEvent);
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
    return rows.map(decodeEvent);
  }

  /**
   * Events of the given types with an id after `after` and before `before` (ids, or time
   * markers: `timeMarker`), oldest first: what the webhook dispatcher reads next.
   */
  async between(
    after: string,
    before: string,
    types: readonly string[],
    limit: number,
  ): Promise<PlatformEvent[]> {
    const rows = await this.db
      .selectFrom("events")
      .selectAll()
      .where("id", ">", after)
      .where("id", "<", before)
      .where("type", "in", [...types])
      .where("team_id", "is not", null)
      .orderBy("id")
      .limit(limit)
      .execute();
    return rows.map(decodeEvent);
  }

  /** The id of the latest event after `after` and before `before` (ids or time markers); undefined when there is none. */
  async lastIdBetween(after: string, before: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("events")
      .select((eb) => eb.fn.max("id").as("id"))
      .where("id", ">", after)
      .where("id", "<", before)
      .executeTakeFirst();
    return row?.id ?? undefined;
  }

  /** A team's events of the given types (of one sandbox, when given), by offset. */
  async forTeam(
    teamId: string,
    opts: {
      types: readonly string[];
      sandboxId?: string;
      order: "asc" | "desc";
      offset: number;
      limit: number;
    },
  ): Promise<PlatformEvent[]> {
    let q = this.db
      .selectFrom("events")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("type", "in", [...opts.types]);
    if (opts.sandboxId !== undefined) q = q.where("sandbox_id", "=", opts.sandboxId);
    const rows = await q.orderBy("id", opts.order).offset(opts.offset).limit(opts.limit).execute();
    return rows.map(decodeEvent);
  }

  /** The sandbox's latest event of the given types before the event `beforeId`. */
  async lastBefore(
    sandboxId: string,
    types: readonly string[],
    beforeId: string,
  ): Promise<PlatformEvent | undefined> {
    const row = await this.db
      .selectFrom("events")
      .selectAll()
      .where("sandbox_id", "=", sandboxId)
      .where("type", "in", [...types])
      .where("id", "<", beforeId)
      .orderBy("id", "desc")
      .limit(1)
      .executeTakeFirst();
    return row && decodeEvent(row);
  }
}

/** The id bound of events recorded from `ms` (epoch milliseconds) on: their ids sort after it, earlier ones before. */
export function timeMarker(ms: number): string {
  return String(ms).padStart(13, "0");
}
