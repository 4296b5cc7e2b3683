import { type Expression, type SqlBool, sql } from "kysely";

/** Where a page of a list ordered newest first by a time, then by id, goes on: its last row's key. */
export interface KeysetCursor {
  time: string;
  id: string;
}

/** The rows that come after the cursor, for lists ordered newest first by `column`, then by `id`. */
export function afterCursor(column: string, cursor: KeysetCursor): Expression<SqlBool> {
  const time = sql.ref(column);
  return sql<SqlBool>`(${time} < ${cursor.time} or (${time} = ${cursor.time} and ${sql.ref("id")} > ${cursor.id}))`;
}
