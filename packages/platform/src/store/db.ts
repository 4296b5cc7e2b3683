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
    const pool = new pg.Pool({ connectionString: url, max: 10, connectionTimeoutMillis: 5_000 });
    // An idle connection the server ended (a restart, a failover) is dropped by the pool and
    // the next query opens another; unheard, this event would end the platform's process.
    pool.on("error", () => undefined);
    kysely = new Kysely<Database>({ dialect: new PostgresDialect({ pool }) });
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

/** PostgreSQL error classes of a server going away or not there yet: 08 (connection), 57P (operator intervention). */
const UNAVAILABLE_SQLSTATE = /^(08|57P0[1-3])/;
const UNAVAILABLE_ERRNO = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT"]);

/** Whether an error says the database is not answering now (rather than that a query was wrong). */
export function isStoreUnavailable(err: unknown): boolean {
  // read by shape: errors of the network stack may come from another realm (a test's vm)
  if (typeof err !== "object" || err === null) return false;
  const { code, message } = err as { code?: unknown; message?: unknown };
  if (typeof code === "string" && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code)))
    return true;
  return (
    typeof message === "string" &&
    /Connection terminated|timeout exceeded when trying to connect/i.test(message)
  );
}
