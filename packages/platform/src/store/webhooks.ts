import { randomUUID } from "node:crypto";
import type { Kysely } from "kysely";
import { nowIso } from "../lib/ids.js";
import type { SandboxEventType, Webhook, WebhookTarget } from "../model/webhook.js";
import { atomically } from "./atomically.js";
import type { Database, WebhooksTable } from "./schema.js";

export interface NewWebhook {
  teamId: string;
  name: string;
  url: string;
  enabled: boolean;
  events: SandboxEventType[];
  signatureSecret: string;
}

export type WebhookChanges = Partial<
  Pick<NewWebhook, "name" | "url" | "enabled" | "events" | "signatureSecret">
>;

const decode = (row: Omit<WebhooksTable, "signature_secret">): Webhook => ({
  id: row.id,
  teamId: row.team_id,
  name: row.name,
  url: row.url,
  enabled: row.enabled === 1,
  events: JSON.parse(row.events) as SandboxEventType[],
  createdAt: row.created_at,
  updatedAt: row.updated_at,
});

/** Every column but the secret: what leaves this store except for a delivery's target. */
const PUBLIC_COLUMNS = [
  "id",
  "team_id",
  "name",
  "url",
  "enabled",
  "events",
  "created_at",
  "updated_at",
] as const;

/** Teams' lifecycle webhooks. The signature secret stays here but for `target` (the sender's). */
export class WebhookStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Inserts the webhook; undefined when the team has `max` already. */
  async insert(w: NewWebhook, max: number): Promise<Webhook | undefined> {
    const run = async (db: Kysely<Database>) => {
      const { count } = await db
        .selectFrom("webhooks")
        .select((eb) => eb.fn.countAll<number | string>().as("count"))
        .where("team_id", "=", w.teamId)
        .executeTakeFirstOrThrow();
      if (Number(count) >= max) return undefined;
      const at = nowIso();
      const row: WebhooksTable = {
        id: randomUUID(),
        team_id: w.teamId,
        name: w.name,
        url: w.url,
        enabled: w.enabled ? 1 : 0,
        events: JSON.stringify(w.events),
        signature_secret: w.signatureSecret,
        created_at: at,
        updated_at: at,
      };
      await db.insertInto("webhooks").values(row).execute();
      return decode(row);
    };
    return atomically(this.db, run);
  }

  /** The team's webhooks, oldest first. */
  async list(teamId: string): Promise<Webhook[]> {
    const rows = await this.db
      .selectFrom("webhooks")
      .select(PUBLIC_COLUMNS)
      .where("team_id", "=", teamId)
      .orderBy("created_at")
      .orderBy("id")
      .execute();
    return rows.map(decode);
  }

  /** The team's webhook; undefined for another team's, as for an unknown one. */
  async get(teamId: string, id: string): Promise<Webhook | undefined> {
    const row = await this.db
      .selectFrom("webhooks")
      .select(PUBLIC_COLUMNS)
      .where("id", "=", id)
      .where("team_id", "=", teamId)
      .executeTakeFirst();
    return row && decode(row);
  }

  /** Replaces the fields given; undefined when the team has no such webhook. */
  async update(teamId: string, id: string, changes: WebhookChanges): Promise<Webhook | undefined> {
    const result = await this.db
      .updateTable("webhooks")
      .set({
        updated_at: nowIso(),
        ...(changes.name !== undefined ? { name: changes.name } : {}),
        ...(changes.url !== undefined ? { url: changes.url } : {}),
        ...(changes.enabled !== undefined ? { enabled: changes.enabled ? 1 : 0 } : {}),
        ...(changes.events !== undefined ? { events: JSON.stringify(changes.events) } : {}),
        ...(changes.signatureSecret !== undefined ? { signature_secret: changes.signatureSecret } : {}),
      })
      .where("id", "=", id)
      .where("team_id", "=", teamId)
      .executeTakeFirst();
    if (Number(result.numUpdatedRows) === 0) return undefined;
    return this.get(teamId, id);
  }

  /** Deletes the webhook with its deliveries and their log; false when the team has no such webhook. */
  async delete(teamId: string, id: string): Promise<boolean> {
    const result = await this.db
      .deleteFrom("webhooks")
      .where("id", "=", id)
      .where("team_id", "=", teamId)
      .executeTakeFirst();
    return Number(result.numDeletedRows) > 0;
  }

  /** Every team's enabled webhooks: what new events are matched against. */
  async enabled(): Promise<Webhook[]> {
    const rows = await this.db
      .selectFrom("webhooks")
      .select(PUBLIC_COLUMNS)
      .where("enabled", "=", 1)
      .execute();
    return rows.map(decode);
  }

  /** When the oldest webhook was made; undefined when there is none. */
  async oldestCreatedAt(): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("webhooks")
      .select((eb) => eb.fn.min("created_at").as("at"))
      .executeTakeFirst();
    return row?.at ?? undefined;
  }

  /** Where a delivery goes now, with the secret that signs it; undefined once the webhook is gone. */
  async target(id: string): Promise<WebhookTarget | undefined> {
    const row = await this.db
      .selectFrom("webhooks")
      .select(["url", "signature_secret", "enabled"])
      .where("id", "=", id)
      .executeTakeFirst();
    return row && { url: row.url, signatureSecret: row.signature_secret, enabled: row.enabled === 1 };
  }
}
