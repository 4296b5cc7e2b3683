import type { Kysely } from "kysely";
import { newTimeOrderedId, nowIso } from "../lib/ids.js";
import type { SandboxEventType, WebhookAttempt } from "../model/webhook.js";
import { atomically } from "./atomically.js";
import { afterCursor, type KeysetCursor } from "./paging.js";
import type { Database, WebhookAttemptsTable, WebhookDeliveriesTable } from "./schema.js";

/** One event for one webhook, with the body every attempt sends. */
export interface NewDelivery {
  webhookId: string;
  eventId: string;
  eventType: SandboxEventType;
  payload: string;
}

/** A delivery whose attempt is due. */
export interface DueDelivery extends NewDelivery {
  id: string;
  /** Attempts made so far (claimed ones included). */
  attempts: number;
  createdAt: string;
}

/** What became of a delivery after an attempt. */
export type DeliveryNext = { state: "delivered" | "failed" } | { state: "pending"; nextAttemptAt: string };

const FANOUT = "fanout";

const decodeAttempt = (row: WebhookAttemptsTable): WebhookAttempt => ({
  id: row.id,
  deliveryId: row.delivery_id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  eventType: row.event_type as SandboxEventType,
  attempt: row.attempt,
  at: row.at,
  statusCode: row.status_code,
  error: row.error,
  durationMs: row.duration_ms,
  outcome: row.outcome,
});

const decodeDue = (row: WebhookDeliveriesTable): DueDelivery => ({
  id: row.id,
  webhookId: row.webhook_id,
  eventId: row.event_id,
  eventType: row.event_type as SandboxEventType,
  payload: row.payload,
  attempts: row.attempts,
  createdAt: row.created_at,
});

/**
 * The webhooks' outbox: how far the dispatcher has read the events (its cursor), one delivery
 * per webhook and event, and each attempt's record (the delivery log). Several dispatchers
 * may share it (nodes of a cluster): the cursor moves and a delivery is claimed only by
 * compare-and-set, so each event becomes each webhook's delivery once and each attempt is
 * one sender's.
 */
export class WebhookDeliveryStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** The fan-out cursor: events with greater ids are not yet matched to webhooks. Set to `initial` when there is none. */
  async cursor(initial: () => Promise<string>): Promise<string> {
    const row = await this.db
      .selectFrom("webhook_cursor")
      .select("event_id")
      .where("name", "=", FANOUT)
      .executeTakeFirst();
    if (row) return row.event_id;
    await this.db
      .insertInto("webhook_cursor")
      .values({ name: FANOUT, event_id: await initial() })
      .onConflict((oc) => oc.column("name").doNothing())
      .execute();
    return this.cursor(initial);
  }

  /** Moves the cursor from `from` to `to`; false when another dispatcher moved it first. */
  async moveCursor(from: string, to: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_cursor")
      .set({ event_id: to })
      .where("name", "=", FANOUT)
      .where("event_id", "=", from)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Adds deliveries, due now; one that exists already (same webhook and event) is left as it is. */
  async add(deliveries: NewDelivery[]): Promise<void> {
    if (deliveries.length === 0) return;
    const at = nowIso();
    await this.db
      .insertInto("webhook_deliveries")
      .values(
        deliveries.map((d) => ({
          id: newTimeOrderedId(),
          webhook_id: d.webhookId,
          event_id: d.eventId,
          event_type: d.eventType,
          payload: d.payload,
          state: "pending" as const,
          attempts: 0,
          next_attempt_at: at,
          created_at: at,
          finished_at: null,
        })),
      )
      .onConflict((oc) => oc.columns(["webhook_id", "event_id"]).doNothing())
      .execute();
  }

  /** Pending deliveries due at `now`, the longest due first. */
  async due(now: string, limit: number): Promise<DueDelivery[]> {
    const rows = await this.db
      .selectFrom("webhook_deliveries")
      .selectAll()
      .where("state", "=", "pending")
      .where("next_attempt_at", "<=", now)
      .orderBy("next_attempt_at")
      .orderBy("event_id")
      .limit(limit)
      .execute();
    return rows.map(decodeDue);
  }

  /**
   * Takes the next attempt at a delivery, until `until` (past it, a sender that died with it
   * leaves it to another): false when another sender took it first.
   */
  async claim(d: DueDelivery, until: string): Promise<boolean> {
    const result = await this.db
      .updateTable("webhook_deliveries")
      .set({ attempts: d.attempts + 1, next_attempt_at: until })
      .where("id", "=", d.id)
      .where("state", "=", "pending")
      .where("attempts", "=", d.attempts)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) === 1;
  }

  /** Records an attempt and what became of its delivery, together; nothing when the delivery went with its webhook. */
  async settle(attempt: WebhookAttempt, next: DeliveryNext): Promise<void> {
    await atomically(this.db, async (db) => {
      const updated = await db
        .updateTable("webhook_deliveries")
        .set(
          next.state === "pending"
            ? { next_attempt_at: next.nextAttemptAt }
            : { state: next.state, finished_at: attempt.at },
        )
        .where("id", "=", attempt.deliveryId)
        .executeTakeFirst();
      if (Number(updated.numUpdatedRows) === 0) return;
      await db
        .insertInto("webhook_attempts")
        .values({
          id: attempt.id,
          delivery_id: attempt.deliveryId,
          webhook_id: attempt.webhookId,
          event_id: attempt.eventId,
          event_type: attempt.eventType,
          attempt: attempt.attempt,
          at: attempt.at,
          status_code: attempt.statusCode,
          error: attempt.error,
          duration_ms: attempt.durationMs,
          outcome: attempt.outcome,
        })
        .execute();
    });
  }

  /** Gives back a claimed attempt that was never made (the platform stopping): due again at once, not counted. */
  async release(d: DueDelivery): Promise<void> {
    await this.db
      .updateTable("webhook_deliveries")
      .set({ attempts: d.attempts, next_attempt_at: nowIso() })
      .where("id", "=", d.id)
      .where("state", "=", "pending")
      .where("attempts", "=", d.attempts + 1)
      .execute();
  }

  /** A webhook's attempts, newest first, after the cursor of the previous page. */
  async attempts(
    webhookId: string,
    opts: { limit: number; after?: KeysetCursor },
  ): Promise<WebhookAttempt[]> {
    let q = this.db.selectFrom("webhook_attempts").selectAll().where("webhook_id", "=", webhookId);
    if (opts.after) q = q.where(afterCursor("at", opts.after));
    const rows = await q.orderBy("at", "desc").orderBy("id").limit(opts.limit).execute();
    return rows.map(decodeAttempt);
  }

  /** Forgets attempts made before `before`, and deliveries finished before it (with their attempts). */
  async prune(before: string): Promise<void> {
    await this.db.deleteFrom("webhook_attempts").where("at", "<", before).execute();
    await this.db
      .deleteFrom("webhook_deliveries")
      .where("state", "!=", "pending")
      .where("finished_at", "<", before)
      .execute();
  }
}
