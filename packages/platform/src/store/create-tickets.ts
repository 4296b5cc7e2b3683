import type { Kysely } from "kysely";
import { newId, nowIso } from "../lib/ids.js";
import type { Database } from "./schema.js";

/** Tickets older than this are of creates long answered (an api that died before settling). */
const TICKET_TTL_MS = 24 * 3600_000;
const PRUNE_EVERY_MS = 60_000;

/** What calling off a create found. */
export interface Abandoned {
  /** True when the create was called off: the node will not finish a sandbox for it. */
  abandoned: boolean;
  /** The sandbox the node began (called off) or finished (not called off), if any. */
  sandboxId?: string;
}

/**
 * A create an api sends to a node carries a ticket, and the node's sandbox lives only by it:
 * the node claims the ticket with the sandbox's id before the sandbox's first record, and
 * confirms it once the sandbox runs; an api that lost the node's answer calls the create off.
 * Each is one statement, so exactly one of "confirmed" and "called off" happens: a sandbox
 * called off never runs as anyone's (the node ends it, or the sandbox is ended in the catalog),
 * and one confirmed is the create's. The node's record is the truth the api reconciles with.
 */
export class CreateTicketStore {
  private prunedAt = 0;

  constructor(private readonly db: Kysely<Database>) {}

  /** A new ticket for a create of `teamId`'s sent to `nodeId`. */
  async issue(teamId: string, nodeId: string): Promise<string> {
    const key = newId();
    await this.db
      .insertInto("create_tickets")
      .values({ key, team_id: teamId, node_id: nodeId, sandbox_id: null, done: 0, created_at: nowIso() })
      .execute();
    if (Date.now() - this.prunedAt > PRUNE_EVERY_MS) {
      this.prunedAt = Date.now();
      await this.db
        .deleteFrom("create_tickets")
        .where("created_at", "<", nowIso(new Date(Date.now() - TICKET_TTL_MS)))
        .execute();
    }
    return key;
  }

  /** The node begins `sandboxId` for the ticket; false when it is not this team's and node's, or was called off. */
  async claim(key: string, teamId: string, nodeId: string, sandboxId: string): Promise<boolean> {
    const result = await this.db
      .updateTable("create_tickets")
      .set({ sandbox_id: sandboxId })
      .where("key", "=", key)
      .where("team_id", "=", teamId)
      .where("node_id", "=", nodeId)
      .where("sandbox_id", "is", null)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The node finished the sandbox it claimed the ticket with; false when the create was called off. */
  async confirm(key: string, sandboxId: string): Promise<boolean> {
    const result = await this.db
      .updateTable("create_tickets")
      .set({ done: 1 })
      .where("key", "=", key)
      .where("sandbox_id", "=", sandboxId)
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** The ticket as it stands: the sandbox claimed with it, and whether it was finished; undefined once gone. */
  async get(key: string): Promise<{ sandboxId?: string; done: boolean } | undefined> {
    const row = await this.db
      .selectFrom("create_tickets")
      .select(["sandbox_id", "done"])
      .where("key", "=", key)
      .executeTakeFirst();
    if (!row) return undefined;
    return { ...(row.sandbox_id ? { sandboxId: row.sandbox_id } : {}), done: row.done === 1 };
  }

  /**
   * Calls the create off unless the node finished it; says which, and the sandbox concerned. An
   * Idempotency-Key the create held is free again (store/idempotency-keys.ts).
   */
  async abandon(key: string): Promise<Abandoned> {
    const [gone] = await this.db
      .deleteFrom("create_tickets")
      .where("key", "=", key)
      .where("done", "=", 0)
      .returning("sandbox_id")
      .execute();
    if (gone) {
      await this.releaseKeys(key);
      return { abandoned: true, ...(gone.sandbox_id ? { sandboxId: gone.sandbox_id } : {}) };
    }
    const kept = await this.db
      .selectFrom("create_tickets")
      .select("sandbox_id")
      .where("key", "=", key)
      .executeTakeFirst();
    return { abandoned: !kept, ...(kept?.sandbox_id ? { sandboxId: kept.sandbox_id } : {}) };
  }

  /**
   * The api has the node's answer: the ticket is done with. An Idempotency-Key its create held
   * keeps the sandbox the create finished, or is free again when it finished none: whoever
   * answered for the create settled the key already; this makes sure of it.
   */
  async settle(key: string): Promise<void> {
    await this.db
      .updateTable("idempotency_keys")
      .set((eb) => ({
        sandbox_id: eb
          .selectFrom("create_tickets")
          .select("sandbox_id")
          .where("key", "=", key)
          .where("done", "=", 1),
      }))
      .where("ticket", "=", key)
      .where("sandbox_id", "is", null)
      .where((eb) =>
        eb.exists(
          eb
            .selectFrom("create_tickets")
            .select("key")
            .where("key", "=", key)
            .where("done", "=", 1)
            .where("sandbox_id", "is not", null),
        ),
      )
      .execute();
    await this.releaseKeys(key);
    await this.db.deleteFrom("create_tickets").where("key", "=", key).execute();
  }

  /** The keys held by the ticket's create that made no sandbox are free again. */
  private async releaseKeys(key: string): Promise<void> {
    await this.db
      .deleteFrom("idempotency_keys")
      .where("ticket", "=", key)
      .where("sandbox_id", "is", null)
      .execute();
  }
}
