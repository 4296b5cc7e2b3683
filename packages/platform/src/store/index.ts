import { type Kysely, sql } from "kysely";
import { CreateTicketStore } from "./create-tickets.js";
import { type Db, type DbOptions, openDb } from "./db.js";
import { EventStore } from "./events.js";
import { IdempotencyKeyStore } from "./idempotency-keys.js";
import { LayerCatalog } from "./layer-catalog.js";
import { LOCAL_NODE } from "./migrations.js";
import { NodeStore } from "./nodes.js";
import { PlacementStore } from "./placements.js";
import { SandboxStore } from "./sandboxes.js";
import type { Database } from "./schema.js";
import { type RowSealer, Sealing, sealClearRows } from "./sealing.js";
import { SecretStore } from "./secrets.js";
import { SnapshotStore } from "./snapshots.js";
import { TeamStore } from "./teams.js";
import { TemplateStore } from "./templates.js";
import { VolumeStore } from "./volumes.js";
import { WebhookDeliveryStore } from "./webhook-deliveries.js";
import { WebhookStore } from "./webhooks.js";

export type { Abandoned } from "./create-tickets.js";
export type { Dialect } from "./db.js";
export type { PlatformEvent } from "./events.js";
export type { Claim, IdempotencyRecord } from "./idempotency-keys.js";
export type { LayerRecord } from "./layer-catalog.js";
export { LOCAL_NODE } from "./migrations.js";
export type { ClusterNode, NodeCapacity, NodeState } from "./nodes.js";
export type { SandboxChanges, SandboxListFilter, SandboxWhere } from "./sandboxes.js";
export type { RowSealer } from "./sealing.js";
export type { CurrentSealedValue, Seal, SealedValue } from "./secrets.js";
export type { CreatedKey } from "./teams.js";
export type { BuildChanges, NewBuild } from "./template-builds.js";
export type { TemplateTag } from "./templates.js";
export type { DeliveryNext, DueDelivery, NewDelivery } from "./webhook-deliveries.js";
export type { NewWebhook, WebhookChanges } from "./webhooks.js";

/** The platform's store: one database, one repository per concern. */
export interface Store {
  db: Db;
  teams: TeamStore;
  templates: TemplateStore;
  sandboxes: SandboxStore;
  snapshots: SnapshotStore;
  volumes: VolumeStore;
  events: EventStore;
  /** Teams' secrets, their values sealed (the secrets service holds the key). */
  secrets: SecretStore;
  /** Teams' lifecycle webhooks, and their outbox: deliveries and the log of attempts. */
  webhooks: WebhookStore;
  webhookDeliveries: WebhookDeliveryStore;
  /** Beyond one machine: the cluster's nodes, layer copies and placements in flight. */
  nodes: NodeStore;
  layers: LayerCatalog;
  placements: PlacementStore;
  /** Creates sent on by an api, whose fate the api and the node settle between them. */
  createTickets: CreateTicketStore;
  /** Teams' Idempotency-Keys of creates, each bound to its request and to the create it made. */
  idempotencyKeys: IdempotencyKeyStore;
  /** The node this store speaks for (`local` under `x serve`): what it creates is that node's. */
  nodeId: string;
  /** Runs `fn` against the same stores in one transaction: all of its writes land, or none. */
  transaction<T>(fn: (store: Store) => Promise<T>): Promise<T>;
  /**
   * `transaction`, holding one of the cluster's locks (a PostgreSQL advisory lock; SQLite has one
   * writer anyway) until it ends. Everything `fn` does must go through the store it is given:
   * one connection, so waiting for the lock never holds one that the holder needs.
   */
  locked<T>(name: "placement" | "bootstrap", fn: (store: Store) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

/**
 * Opens the store. `sealer` (the secrets key) seals sandboxes' and volumes' tokens at rest;
 * given it, rows from before sealing are sealed now. Without it (`x api`, the CLI's tools) those
 * tokens can be neither written nor read, only where things are (`sandboxes.where`).
 */
export async function openStore(
  options: DbOptions & { nodeId?: string; sealer?: RowSealer },
): Promise<Store> {
  const db = await openDb(options);
  const nodeId = options.nodeId ?? LOCAL_NODE;
  const sealing = new Sealing(options.sealer);
  if (options.sealer) {
    try {
      await db.kysely.transaction().execute((trx) => sealClearRows(trx, options.sealer!));
    } catch (err) {
      await db.close();
      throw err;
    }
  }
  const over = (kysely: Kysely<Database>): Store => ({
    db,
    teams: new TeamStore(kysely),
    templates: new TemplateStore(kysely, nodeId),
    sandboxes: new SandboxStore(kysely, nodeId, sealing),
    snapshots: new SnapshotStore(kysely),
    volumes: new VolumeStore(kysely, nodeId, sealing),
    events: new EventStore(kysely),
    secrets: new SecretStore(kysely),
    webhooks: new WebhookStore(kysely),
    webhookDeliveries: new WebhookDeliveryStore(kysely),
    nodes: new NodeStore(kysely),
    layers: new LayerCatalog(kysely),
    placements: new PlacementStore(kysely),
    createTickets: new CreateTicketStore(kysely),
    idempotencyKeys: new IdempotencyKeyStore(kysely),
    nodeId,
    transaction: (fn) =>
      kysely.isTransaction ? fn(over(kysely)) : kysely.transaction().execute((trx) => fn(over(trx))),
    locked: (name, fn) => {
      const run = async (k: Kysely<Database>) => {
        if (db.dialect === "postgres")
          await sql`select pg_advisory_xact_lock(hashtext(${`x-${name}`}))`.execute(k);
        return fn(over(k));
      };
      return kysely.isTransaction ? run(kysely) : kysely.transaction().execute(run);
    },
    close: () => db.close(),
  });
  return over(db.kysely);
}
