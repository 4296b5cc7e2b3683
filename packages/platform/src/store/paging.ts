import { type Expression, type SqlBool, sql } from "kysely";

/**
 * Keyset paging for lists ordered newest first by `column`, then by `id`: the rows that come
 * after the cursor (the time and id of the last row the caller saw).
 */
export function afterCursor(column: string, cursor: { time: string; id: string }): Expression<SqlBool> {
  const time = sql.ref(column);
  return sql<SqlBool>`(${time} < ${cursor.time} or (${time} = ${cursor.time} and ${sql.ref("id")} > ${cursor.id}))`;
}
