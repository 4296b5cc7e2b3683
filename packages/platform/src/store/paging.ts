import { type Expression, type SqlBool, sql } from "kysely";

/** Where a page of a list ordered by a time, then by id, goes on: its last row's key. */
export interface KeysetCursor {
  time: string;
  id: string;
}

/**
 * The rows that come after the cursor, for lists ordered by `column` (newest first unless
 * `order` is "asc"), then by `id`.
 */
export function afterCursor(
  column: string,
  cursor: KeysetCursor,
  order: "asc" | "desc" = "desc",
): Expression<SqlBool> {
  const time = sql.ref(column);
  const beyond = order === "asc" ? sql`>` : sql`<`;
  return sql<SqlBool>`(${time} ${beyond} ${cursor.time} or (${time} = ${cursor.time} and ${sql.ref("id")} > ${cursor.id}))`;
}
