import { type Kysely, type Migration, type MigrationProvider, PostgresAdapter, sql } from "kysely";

/**
 * One set of migrations for both dialects: only portable column types (text, integer) and
 * the schema builder, so SQLite and PostgreSQL end up with the same tables.
 */
const migrations: Record<string, Migration> = {
  "0001-initial": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("teams")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("namespace", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("api_keys")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("key_hash", "text", (c) => c.notNull().unique())
        .addColumn("key_mask", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("last_used_at", "text")
        .execute();
      await db.schema
        .createTable("templates")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("public", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("last_spawned_at", "text")
        .addColumn("spawn_count", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("from_sandbox_id", "text")
        .execute();
      await db.schema
        .createTable("template_aliases")
        .addColumn("namespace", "text", (c) => c.notNull())
        .addColumn("alias", "text", (c) => c.notNull())
        .addColumn("template_id", "text", (c) => c.notNull().references("templates.id").onDelete("cascade"))
        .addPrimaryKeyConstraint("template_aliases_pk", ["namespace", "alias"])
        .execute();
      await db.schema
        .createIndex("template_aliases_template")
        .on("template_aliases")
        .column("template_id")
        .execute();
      await db.schema
        .createTable("builds")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("template_id", "text", (c) => c.notNull().references("templates.id").onDelete("cascade"))
        .addColumn("status", "text", (c) => c.notNull())
        .addColumn("reason", "text")
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addColumn("finished_at", "text")
        .addColumn("cpu_count", "integer", (c) => c.notNull())
        .addColumn("memory_mb", "integer", (c) => c.notNull())
        .addColumn("disk_size_mb", "integer", (c) => c.notNull())
        .addColumn("envd_version", "text", (c) => c.notNull())
        .addColumn("spec", "text", (c) => c.notNull())
        .addColumn("layers", "text")
        .addColumn("start_cmd", "text")
        .addColumn("ready_cmd", "text")
        .addColumn("snapshot_kind", "text")
        .execute();
      // Builds of a template are paged newest first with (created_at, id) as the cursor.
      await db.schema
        .createIndex("builds_template_created")
        .on("builds")
        .columns(["template_id", "created_at", "id"])
        .execute();
      await db.schema
        .createTable("build_logs")
        .addColumn("build_id", "text", (c) => c.notNull().references("builds.id").onDelete("cascade"))
        .addColumn("seq", "integer", (c) => c.notNull())
        .addColumn("timestamp", "text", (c) => c.notNull())
        .addColumn("level", "text", (c) => c.notNull())
        .addColumn("message", "text", (c) => c.notNull())
        .addColumn("step", "text")
        .addPrimaryKeyConstraint("build_logs_pk", ["build_id", "seq"])
        .execute();
      await db.schema
        .createTable("template_tags")
        .addColumn("template_id", "text", (c) => c.notNull().references("templates.id").onDelete("cascade"))
        .addColumn("tag", "text", (c) => c.notNull())
        .addColumn("build_id", "text", (c) => c.notNull().references("builds.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("template_tags_pk", ["template_id", "tag"])
        .execute();
      await db.schema
        .createTable("sandboxes")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("template_id", "text", (c) => c.notNull())
        .addColumn("build_id", "text", (c) => c.notNull())
        .addColumn("alias", "text")
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("pause_kind", "text")
        .addColumn("runtime", "text", (c) => c.notNull())
        .addColumn("started_at", "text", (c) => c.notNull())
        .addColumn("end_at", "text", (c) => c.notNull())
        .addColumn("cpu_count", "integer", (c) => c.notNull())
        .addColumn("memory_mb", "integer", (c) => c.notNull())
        .addColumn("disk_size_mb", "integer", (c) => c.notNull())
        .addColumn("metadata", "text", (c) => c.notNull())
        .addColumn("env_vars", "text", (c) => c.notNull())
        .addColumn("envd_access_token", "text", (c) => c.notNull())
        .addColumn("allow_internet", "integer", (c) => c.notNull())
        .addColumn("auto_pause", "integer", (c) => c.notNull())
        .addColumn("auto_resume", "integer", (c) => c.notNull())
        .addColumn("placement", "text")
        .addColumn("killed_at", "text")
        .execute();
      await db.schema
        .createIndex("sandboxes_team_state")
        .on("sandboxes")
        .columns(["team_id", "state", "started_at"])
        .execute();
      await db.schema
        .createTable("snapshots")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("sandbox_id", "text", (c) => c.notNull())
        .addColumn("template_id", "text", (c) => c.notNull().references("templates.id").onDelete("cascade"))
        .addColumn("build_id", "text", (c) => c.notNull().references("builds.id").onDelete("cascade"))
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("events")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("team_id", "text")
        .addColumn("sandbox_id", "text")
        .addColumn("type", "text", (c) => c.notNull())
        .addColumn("data", "text", (c) => c.notNull())
        .execute();
      await db.schema.createIndex("events_sandbox").on("events").columns(["sandbox_id", "id"]).execute();
    },
  },
  // Columns written and never read: the runtime spec lives in `spec`, placement and a template's
  // source sandbox were never used.
  "0002-drop-unread-columns": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("builds").dropColumn("start_cmd").execute();
      await db.schema.alterTable("builds").dropColumn("ready_cmd").execute();
      await db.schema.alterTable("sandboxes").dropColumn("placement").execute();
      await db.schema.alterTable("templates").dropColumn("from_sandbox_id").execute();
    },
  },
  // a template's own warm pool bounds (null: the platform's defaults)
  "0003-template-warm-pool": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("templates").addColumn("pool_min", "integer").execute();
      await db.schema.alterTable("templates").addColumn("pool_max", "integer").execute();
    },
  },
  // why a sandbox broke (state `error`)
  "0004-sandbox-reason": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("sandboxes").addColumn("reason", "text").execute();
    },
  },
  "0005-sandbox-network": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("sandboxes").addColumn("egress", "text").execute();
      await db.schema.alterTable("sandboxes").addColumn("ingress", "text").execute();
      await db.schema.alterTable("sandboxes").addColumn("traffic_access_token", "text").execute();
      // internet off was the only policy there was: it becomes allow_internet_access false
      await sql`update sandboxes set egress = ${JSON.stringify({ allowInternetAccess: false, allowOut: [], denyOut: [] })} where allow_internet = 0`.execute(
        db,
      );
      await db.schema.alterTable("sandboxes").dropColumn("allow_internet").execute();
    },
  },
  // on timeout, a pause that keeps only files (the client's onTimeout.keepMemory false)
  "0006-sandbox-auto-pause-memory": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .alterTable("sandboxes")
        .addColumn("auto_pause_memory", "integer", (c) => c.notNull().defaultTo(1))
        .execute();
    },
  },
  // persistent volumes, and which of them a sandbox mounts where
  "0007-volumes": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("volumes")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("size_mb", "integer", (c) => c.notNull())
        .addColumn("token", "text", (c) => c.notNull().unique())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addUniqueConstraint("volumes_team_name", ["team_id", "name"])
        .execute();
      await db.schema.alterTable("sandboxes").addColumn("volume_mounts", "text").execute();
    },
  },
  // beyond one machine: nodes, which node holds what, layers by digest, placements in flight
  "0008-cluster": {
    async up(db: Kysely<unknown>) {
      // `local`: the one node of `x serve`
      for (const table of ["sandboxes", "builds", "volumes"]) {
        await db.schema
          .alterTable(table)
          .addColumn("node_id", "text", (c) => c.notNull().defaultTo(LOCAL_NODE))
          .execute();
      }
      await db.schema.createIndex("sandboxes_node").on("sandboxes").columns(["node_id", "state"]).execute();
      await db.schema
        .createTable("nodes")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("api_url", "text", (c) => c.notNull())
        .addColumn("traffic_url", "text", (c) => c.notNull())
        .addColumn("started_at", "text", (c) => c.notNull())
        .addColumn("heartbeat_at", "text", (c) => c.notNull())
        .addColumn("down_at", "text")
        .addColumn("capacity", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("layers")
        .addColumn("path", "text", (c) => c.primaryKey())
        .addColumn("digest", "text", (c) => c.notNull())
        .addColumn("bytes", "integer", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createTable("layer_copies")
        .addColumn("path", "text", (c) => c.notNull().references("layers.path").onDelete("cascade"))
        .addColumn("node_id", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("layer_copies_pk", ["path", "node_id"])
        .execute();
      await db.schema
        .createTable("placements")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("node_id", "text", (c) => c.notNull())
        .addColumn("memory_mb", "integer", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .execute();
      if (isPostgres(db)) {
        // every change of a sandbox's row or a node's is announced, so proxies drop what they cached
        await sql`create or replace function x_notify_sandbox() returns trigger language plpgsql as $$
          begin perform pg_notify('x_sandboxes', new.id); return null; end $$`.execute(db);
        await sql`create trigger sandboxes_notify after insert or update on sandboxes
          for each row execute function x_notify_sandbox()`.execute(db);
        await sql`create or replace function x_notify_node() returns trigger language plpgsql as $$
          begin
            if tg_op = 'UPDATE' and old.state = new.state and old.api_url = new.api_url
              and old.traffic_url = new.traffic_url then return null; end if;
            perform pg_notify('x_nodes', new.id); return null;
          end $$`.execute(db);
        await sql`create trigger nodes_notify after insert or update on nodes
          for each row execute function x_notify_node()`.execute(db);
      }
    },
  },
  // a create sent on by an api, so that after a failure the api and the node agree on its fate
  "0009-create-tickets": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("create_tickets")
        .addColumn("key", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull())
        .addColumn("node_id", "text", (c) => c.notNull())
        .addColumn("sandbox_id", "text")
        .addColumn("done", "integer", (c) => c.notNull().defaultTo(0))
        .addColumn("created_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("create_tickets_created")
        .on("create_tickets")
        .column("created_at")
        .execute();
    },
  },
  // teams of their own limits (null: the platform's), and access tokens beside API keys
  "0010-team-limits-access-tokens": {
    async up(db: Kysely<unknown>) {
      for (const column of [
        "limit_sandboxes",
        "limit_cpu_count",
        "limit_memory_mb",
        "limit_disk_mb",
        "limit_timeout_s",
      ]) {
        await db.schema.alterTable("teams").addColumn(column, "integer").execute();
      }
      await db.schema
        .alterTable("api_keys")
        .addColumn("kind", "text", (c) => c.notNull().defaultTo("api_key"))
        .execute();
      // the key GET /teams made for an access token, replaced when it makes the next one
      await db.schema.alterTable("api_keys").addColumn("minted_by", "text").execute();
    },
  },
  // lifecycle webhooks: the webhooks, one delivery per webhook and event (the outbox the
  // dispatcher fills from `events`), each attempt's record, and the dispatcher's cursor
  "0011-webhooks": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("webhooks")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("url", "text", (c) => c.notNull())
        .addColumn("enabled", "integer", (c) => c.notNull())
        .addColumn("events", "text", (c) => c.notNull())
        .addColumn("signature_secret", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("webhooks_team")
        .on("webhooks")
        .columns(["team_id", "created_at"])
        .execute();
      await db.schema
        .createTable("webhook_deliveries")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("webhook_id", "text", (c) => c.notNull().references("webhooks.id").onDelete("cascade"))
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("event_type", "text", (c) => c.notNull())
        .addColumn("payload", "text", (c) => c.notNull())
        .addColumn("state", "text", (c) => c.notNull())
        .addColumn("attempts", "integer", (c) => c.notNull())
        .addColumn("next_attempt_at", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("finished_at", "text")
        .addUniqueConstraint("webhook_deliveries_event", ["webhook_id", "event_id"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_due")
        .on("webhook_deliveries")
        .columns(["state", "next_attempt_at"])
        .execute();
      await db.schema
        .createIndex("webhook_deliveries_finished")
        .on("webhook_deliveries")
        .column("finished_at")
        .execute();
      await db.schema
        .createTable("webhook_attempts")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("delivery_id", "text", (c) =>
          c.notNull().references("webhook_deliveries.id").onDelete("cascade"),
        )
        .addColumn("webhook_id", "text", (c) => c.notNull())
        .addColumn("event_id", "text", (c) => c.notNull())
        .addColumn("event_type", "text", (c) => c.notNull())
        .addColumn("attempt", "integer", (c) => c.notNull())
        .addColumn("at", "text", (c) => c.notNull())
        .addColumn("status_code", "integer")
        .addColumn("error", "text")
        .addColumn("duration_ms", "integer", (c) => c.notNull())
        .addColumn("outcome", "text", (c) => c.notNull())
        .execute();
      await db.schema
        .createIndex("webhook_attempts_webhook")
        .on("webhook_attempts")
        .columns(["webhook_id", "at", "id"])
        .execute();
      await db.schema.createIndex("webhook_attempts_at").on("webhook_attempts").column("at").execute();
      await db.schema
        .createIndex("webhook_attempts_delivery")
        .on("webhook_attempts")
        .column("delivery_id")
        .execute();
      await db.schema
        .createTable("webhook_cursor")
        .addColumn("name", "text", (c) => c.primaryKey())
        .addColumn("event_id", "text", (c) => c.notNull())
        .execute();
      // the team's events in order, for the events API
      await db.schema.createIndex("events_team").on("events").columns(["team_id", "id"]).execute();
    },
  },
  // teams' secrets: the record, and each version's value sealed with the platform's key
  // (AES-256-GCM; the key lives in a file, never here), kept until the secret is deleted
  "0012-secrets": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("secrets")
        .addColumn("id", "text", (c) => c.primaryKey())
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("name", "text", (c) => c.notNull())
        .addColumn("current_version", "integer", (c) => c.notNull())
        .addColumn("metadata", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("updated_at", "text", (c) => c.notNull())
        .addUniqueConstraint("secrets_team_name", ["team_id", "name"])
        .execute();
      await db.schema
        .createIndex("secrets_team_created")
        .on("secrets")
        .columns(["team_id", "created_at", "id"])
        .execute();
      await db.schema
        .createTable("secret_versions")
        .addColumn("secret_id", "text", (c) => c.notNull().references("secrets.id").onDelete("cascade"))
        .addColumn("version", "integer", (c) => c.notNull())
        .addColumn("key_id", "text", (c) => c.notNull())
        .addColumn("nonce", "text", (c) => c.notNull())
        .addColumn("ciphertext", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("secret_versions_pk", ["secret_id", "version"])
        .execute();
    },
  },
  // the workload identity tokens a sandbox registered on create (`iam.tokens`)
  "0013-sandbox-identity-tokens": {
    async up(db: Kysely<unknown>) {
      await db.schema.alterTable("sandboxes").addColumn("identity_tokens", "text").execute();
    },
  },
  // teams' limits of what they hold (volumes, templates, snapshots, uploads) and of one fork
  "0014-team-holding-limits": {
    async up(db: Kysely<unknown>) {
      for (const column of [
        "limit_volumes",
        "limit_volume_size_mb",
        "limit_templates",
        "limit_snapshots",
        "limit_fork_count",
        "limit_uploads",
        "limit_uploads_mb",
      ]) {
        await db.schema.alterTable("teams").addColumn(column, "integer").execute();
      }
    },
  },
  // creates safe to retry: a team's Idempotency-Key, the request it came with and the create
  // ticket of the attempt that holds it (then the sandbox it made), for a day
  "0015-idempotency-keys": {
    async up(db: Kysely<unknown>) {
      await db.schema
        .createTable("idempotency_keys")
        .addColumn("team_id", "text", (c) => c.notNull().references("teams.id").onDelete("cascade"))
        .addColumn("key", "text", (c) => c.notNull())
        .addColumn("request_hash", "text", (c) => c.notNull())
        .addColumn("ticket", "text", (c) => c.notNull())
        .addColumn("sandbox_id", "text")
        .addColumn("lease_until", "text", (c) => c.notNull())
        .addColumn("created_at", "text", (c) => c.notNull())
        .addColumn("expires_at", "text", (c) => c.notNull())
        .addPrimaryKeyConstraint("idempotency_keys_pk", ["team_id", "key"])
        .execute();
      await db.schema
        .createIndex("idempotency_keys_expires")
        .on("idempotency_keys")
        .column("expires_at")
        .execute();
      await db.schema
        .createIndex("idempotency_keys_ticket")
        .on("idempotency_keys")
        .column("ticket")
        .execute();
    },
  },
};

/** The node id of `x serve`, and of rows from before nodes existed. */
export const LOCAL_NODE = "local";

function isPostgres(db: Kysely<unknown>): boolean {
  return db.getExecutor().adapter instanceof PostgresAdapter;
}

export const migrationProvider: MigrationProvider = {
  async getMigrations() {
    return migrations;
  },
};
