import { createHash, timingSafeEqual } from "node:crypto";
import { headerValue, requestedUsername, tokenAccepted } from "../auth.js";
import type { EnvdState } from "../state.js";
import { lookupUser, UnknownUserError, type User } from "../users.js";
import { HttpError, type HttpRequest } from "./respond.js";

const INVALID_TOKEN = "invalid or missing access token (X-Access-Token)";

/** Every route but `/health` needs the token once one is set. */
export function requireToken(state: EnvdState, req: HttpRequest): void {
  if (!tokenAccepted(state, headerValue(req.headers, "x-access-token")))
    throw new HttpError(401, INVALID_TOKEN);
}

/**
 * The public client's pre-signed URL: `v1_` + unpadded base64 of
 * sha256(`path:operation:username:token[:expiration]`), where path and username are the
 * query values as sent ('' when absent).
 */
export function fileSignature(
  path: string,
  operation: "read" | "write",
  username: string,
  accessToken: string,
  expiration?: number,
): string {
  const raw = [
    path,
    operation,
    username,
    accessToken,
    ...(expiration === undefined ? [] : [String(expiration)]),
  ].join(":");
  return `v1_${createHash("sha256").update(raw).digest("base64").replace(/=+$/, "")}`;
}

/**
 * `GET`/`POST /files` accept the token header or, without it, a signature for the
 * operation. A header that is present must be right even when a signature is also given.
 */
export function authorizeFileRequest(
  state: EnvdState,
  req: HttpRequest,
  query: URLSearchParams,
  operation: "read" | "write",
): void {
  const token = state.accessToken;
  if (!token) return;
  const sent = headerValue(req.headers, "x-access-token");
  if (sent !== undefined) {
    if (!tokenAccepted(state, sent)) throw new HttpError(401, INVALID_TOKEN);
    return;
  }
  const signature = query.get("signature");
  if (!signature) throw new HttpError(401, `${INVALID_TOKEN}; or sign the URL with 'signature'`);
  const rawExpiration = query.get("signature_expiration");
  let expiration: number | undefined;
  if (rawExpiration !== null) {
    if (!/^\d+$/.test(rawExpiration))
      throw new HttpError(401, "invalid signature_expiration: expected Unix seconds");
    expiration = Number(rawExpiration);
  }
  const expected = fileSignature(
    query.get("path") ?? "",
    operation,
    query.get("username") ?? "",
    token,
    expiration,
  );
  const a = Buffer.from(signature);
  const b = Buffer.from(expected);
  if (a.length !== b.length || !timingSafeEqual(a, b)) {
    throw new HttpError(401, `invalid signature for ${operation} of '${query.get("path") ?? ""}'`);
  }
  if (expiration !== undefined && expiration < Math.floor(Date.now() / 1000)) {
    // E2B envd's exact wording (clients match it): {"code":401,"message":"signature is already expired"}
    throw new HttpError(401, "signature is already expired");
  }
}

/** The user a file route acts as: `username` query or body field, Basic auth, or the default. */
export async function requestUser(
  state: EnvdState,
  req: HttpRequest,
  explicit?: string | null,
): Promise<User> {
  const name = requestedUsername(state, headerValue(req.headers, "authorization"), explicit);
  try {
    return await lookupUser(name);
  } catch (err) {
    if (err instanceof UnknownUserError) throw new HttpError(401, err.message);
    throw err;
  }
}
