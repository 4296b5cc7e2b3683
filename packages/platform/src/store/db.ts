import path from "node:path";
import SqliteDatabase from "better-sqlite3";
import { Kysely, Migrator, PostgresDialect, SqliteDialect } from "kysely";
import pg from "pg";
import { migrationProvider } from "./migrations.js";
import type { Database } from "./schema.js";

export type Dialect = "sqlite" | "postgres";

export interface DbOptions {
  /** `postgres://…` selects PostgreSQL; otherwise SQLite in `dataDir`. */
  databaseUrl?: string;
  dataDir: string;
}

export interface Db {
  kysely: Kysely<Database>;
  dialect: Dialect;
  close(): Promise<void>;
}

/** Opens the store and brings its schema up to date. */
export async function openDb(options: DbOptions): Promise<Db> {
  const url = options.databaseUrl;
  let kysely: Kysely<Database>;
  let dialect: Dialect;
  if (url && /^postgres(ql)?:\/\//.test(url)) {
    dialect = "postgres";
    kysely = new Kysely<Database>({
      dialect: new PostgresDialect({ pool: new pg.Pool({ connectionString: url, max: 10 }) }),
    });
  } else {
    dialect = "sqlite";
    const file = url?.startsWith("sqlite:")
      ? url.slice("sqlite:".length)
      : path.join(options.dataDir, "platform.db");
    const sqlite = new SqliteDatabase(file);
    // WAL lets readers run while a writer commits; the store is written from one process.
    sqlite.pragma("journal_mode = WAL");
    sqlite.pragma("foreign_keys = ON");
    sqlite.pragma("busy_timeout = 5000");
    kysely = new Kysely<Database>({ dialect: new SqliteDialect({ database: sqlite }) });
  }
  const migrator = new Migrator({ db: kysely, provider: migrationProvider });
  const { error, results } = await migrator.migrateToLatest();
  const failed = results?.find((r) => r.status === "Error");
  if (error || failed) {
    await kysely.destroy();
    throw new Error(`store migration ${failed?.migrationName ?? ""} failed: ${String(error)}`);
  }
  return { kysely, dialect, close: () => kysely.destroy() };
}
