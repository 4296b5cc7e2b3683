import type { Kysely, WhereInterface } from "kysely";
import { nowIso } from "../lib/ids.js";
import type { Database } from "./schema.js";

/** How long a key binds to its create: a day, as Stripe's and the IETF draft's keys do. */
export const IDEMPOTENCY_KEY_TTL_MS = 24 * 3600_000;
const SWEEP_EVERY_MS = 60_000;

/** A team's Idempotency-Key as kept: the request it came with and the attempt that holds it. */
export interface IdempotencyRecord {
  teamId: string;
  key: string;
  requestHash: string;
  /** The create ticket of the attempt holding the key (store/create-tickets.ts). */
  ticket: string;
  /** The sandbox the key made; undefined while an attempt is making it. */
  sandboxId?: string;
  leaseUntil: string;
  createdAt: string;
  expiresAt: string;
}

/** What claiming a key found: it was free (the caller's attempt holds it now), or it is held. */
export type Claim = { kind: "claimed" } | { kind: "held"; record: IdempotencyRecord };

export interface ClaimRequest {
  teamId: string;
  key: string;
  requestHash: string;
  /** The ticket of the caller's attempt. */
  ticket: string;
  leaseMs: number;
}

const leaseUntil = (ms: number) => nowIso(new Date(Date.now() + ms));

/**
 * Creates that are safe to retry: a team's key binds, for a day, to one request (its hash) and
 * to one create at a time, by that create's ticket. Every change is one statement guarded by
 * the ticket it expects, so of several requests with one key exactly one holds it, a holder
 * taken for gone is replaced by exactly one other, and a key that made a sandbox keeps it.
 */
export class IdempotencyKeyStore {
  private sweptAt = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** Holds the key for the caller's attempt unless another holds it (or made a sandbox with it). */
  async claim(r: ClaimRequest): Promise<Claim> {
    await this.sweepNowAndThen();
    const at = new Date();
    const now = nowIso(at);
    // a key older than a day is free again
    await this.db
      .deleteFrom("idempotency_keys")
      .where("team_id", "=", r.teamId)
      .where("key", "=", r.key)
      .where("expires_at", "<=", now)
      .execute();
    const inserted = await this.db
      .insertInto("idempotency_keys")
      .values({
        team_id: r.teamId,
        key: r.key,
        request_hash: r.requestHash,
        ticket: r.ticket,
        sandbox_id: null,
        lease_until: nowIso(new Date(at.getTime() + r.leaseMs)),
        created_at: now,
        expires_at: nowIso(new Date(at.getTime() + IDEMPOTENCY_KEY_TTL_MS)),
      })
      .onConflict((oc) => oc.columns(["team_id", "key"]).doNothing())
      .executeTakeFirst();
    if (Number(inserted.numInsertedOrUpdatedRows ?? 0) > 0) return { kind: "claimed" };
    const record = await this.get(r.teamId, r.key);
    // released between the insert and the read: free again, for whoever claims it next
    return record ? { kind: "held", record } : this.claim(r);
  }

  /** The key's record, unless there is none or it has expired. */
  async get(teamId: string, key: string): Promise<IdempotencyRecord | undefined> {
    const row = await this.db
      .selectFrom("idempotency_keys")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("key", "=", key)
      .where("expires_at", ">", nowIso())
      .executeTakeFirst();
    if (!row) return undefined;
    return {
      teamId: row.team_id,
      key: row.key,
      requestHash: row.request_hash,
      ticket: row.ticket,
      ...(row.sandbox_id ? { sandboxId: row.sandbox_id } : {}),
      leaseUntil: row.lease_until,
      createdAt: row.created_at,
      expiresAt: row.expires_at,
    };
  }

  /** The holder is still at it; false when it no longer holds the key. */
  async renew(teamId: string, key: string, ticket: string, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable("idempotency_keys")
      .set({ lease_until: leaseUntil(leaseMs) })
      .$call(heldBy(teamId, key, ticket))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The holder made `sandboxId`: the key answers with it from now on. False when it no longer held the key. */
  async finish(teamId: string, key: string, ticket: string, sandboxId: string): Promise<boolean> {
    const result = await this.db
      .updateTable("idempotency_keys")
      .set({ sandbox_id: sandboxId })
      .$call(heldBy(teamId, key, ticket))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The holder's attempt failed: the key is free for the next request. False when it no longer held it. */
  async release(teamId: string, key: string, ticket: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("idempotency_keys")
      .$call(heldBy(teamId, key, ticket))
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /**
   * Hands the key from an attempt that is over, or taken for gone, to the caller's: true for
   * exactly one of several callers, and never once the key made a sandbox.
   */
  async takeOver(teamId: string, key: string, from: string, to: string, leaseMs: number): Promise<boolean> {
    const result = await this.db
      .updateTable("idempotency_keys")
      .set({ ticket: to, lease_until: leaseUntil(leaseMs) })
      .$call(heldBy(teamId, key, from))
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** Removes the keys older than a day; how many went. */
  async sweep(): Promise<number> {
    const result = await this.db.deleteFrom("idempotency_keys").where("expires_at", "<=", nowIso()).execute();
    return result.reduce((n, r) => n + Number(r.numDeletedRows), 0);
  }

  private async sweepNowAndThen(): Promise<void> {
    if (Date.now() - this.sweptAt < SWEEP_EVERY_MS) return;
    this.sweptAt = Date.now();
    await this.sweep();
  }
}

/** The row of a key that `ticket`'s attempt holds and that has made no sandbox yet. */
function heldBy(teamId: string, key: string, ticket: string) {
  return <Q extends WhereInterface<Database, "idempotency_keys">>(qb: Q): Q =>
    qb
      .where("team_id", "=", teamId)
      .where("key", "=", key)
      .where("ticket", "=", ticket)
      .where("sandbox_id", "is", null) as Q;
}
