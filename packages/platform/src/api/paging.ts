import { invalid } from "../model/errors.js";
import type { KeysetCursor } from "../store/paging.js";

/** Pagination cursors are opaque to clients: base64url JSON of the last row's sort key. */
function encodeCursor(cursor: KeysetCursor): string {
  return Buffer.from(JSON.stringify([cursor.time, cursor.id])).toString("base64url");
}

function decodeCursor(token: unknown): KeysetCursor | undefined {
  if (token === undefined || token === "") return undefined;
  try {
    const key = JSON.parse(Buffer.from(String(token), "base64url").toString("utf8")) as unknown;
    if (Array.isArray(key) && key.length === 2 && key.every((k) => typeof k === "string"))
      return { time: key[0] as string, id: key[1] as string };
  } catch {
    // fall through to the error below
  }
  throw invalid("nextToken is not a token this API issued");
}

export interface Page<T> {
  items: T[];
  /** The token of the next page, when there is one. */
  nextToken?: string;
  /** `X-Next-Token` when there is a next page, as the clients read it. */
  headers: Record<string, string>;
}

/**
 * One page of a list ordered newest first by (time, id): fetches one row more than `limit` to
 * know whether a next page exists, and hands out the cursor of the page's last row.
 */
export async function pageOf<T>(
  fetch: (limit: number, after: KeysetCursor | undefined) => Promise<T[]>,
  opts: { limit?: number; nextToken?: string; keyOf: (row: T) => KeysetCursor },
): Promise<Page<T>> {
  const limit = opts.limit ?? 100;
  const rows = await fetch(limit + 1, decodeCursor(opts.nextToken));
  const items = rows.slice(0, limit);
  const last = items.at(-1);
  if (rows.length <= limit || !last) return { items, headers: {} };
  const nextToken = encodeCursor(opts.keyOf(last));
  return { items, nextToken, headers: { "X-Next-Token": nextToken } };
}
