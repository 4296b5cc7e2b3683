import type { Kysely } from "kysely";
import type { Database } from "./schema.js";

/** Runs `fn` in a transaction: the one `db` already is part of, or a new one. */
export function atomically<T>(db: Kysely<Database>, fn: (db: Kysely<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db) : db.transaction().execute(fn);
}
