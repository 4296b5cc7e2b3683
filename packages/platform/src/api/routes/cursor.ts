import { badRequest } from "../errors.js";

/** Pagination cursors are opaque to clients: base64url JSON of the last row's sort key. */
export function encodeCursor(key: [string, string]): string {
  return Buffer.from(JSON.stringify(key)).toString("base64url");
}

export function decodeCursor(token: unknown): [string, string] | undefined {
  if (token === undefined || token === "") return undefined;
  try {
    const key = JSON.parse(Buffer.from(String(token), "base64url").toString("utf8")) as unknown;
    if (Array.isArray(key) && key.length === 2 && key.every((k) => typeof k === "string"))
      return key as [string, string];
  } catch {
    // fall through to the error below
  }
  throw badRequest("nextToken is not a token this API issued");
}
