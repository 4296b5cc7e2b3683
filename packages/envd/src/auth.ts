import { timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import { Code, ConnectError, type Interceptor } from "@connectrpc/connect";
import type { EnvdState } from "./state.js";
import { lookupUser, UnknownUserError, type User } from "./users.js";

function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** True when the request may proceed: no token configured, or the right one sent. */
export function tokenAccepted(state: EnvdState, sent: string | null | undefined): boolean {
  if (!state.accessToken) return true;
  return typeof sent === "string" && sameSecret(sent, state.accessToken);
}

/** Rejects Connect calls without the access token, before any handler runs. */
export function accessTokenInterceptor(state: EnvdState): Interceptor {
  return (next) => async (req) => {
    if (!tokenAccepted(state, req.header.get("x-access-token"))) {
      throw new ConnectError("invalid or missing access token (X-Access-Token)", Code.Unauthenticated);
    }
    return next(req);
  };
}

/**
 * The user a request acts as: `Authorization: Basic base64(user:)` as the public client
 * sends it, or an explicit `username` (HTTP routes), or the default user.
 */
export function requestedUsername(
  state: EnvdState,
  authorization: string | null | undefined,
  explicit?: string | null,
): string {
  if (explicit) return explicit;
  const match = authorization?.match(/^Basic\s+(.+)$/i);
  if (match?.[1]) {
    const decoded = Buffer.from(match[1], "base64").toString("utf8");
    const name = decoded.split(":")[0];
    if (name) return name;
  }
  return state.defaultUser;
}

/** Looks the user up, turning an unknown name into the Connect error clients expect. */
export async function userForRpc(state: EnvdState, header: Headers): Promise<User> {
  const name = requestedUsername(state, header.get("authorization"));
  try {
    return await lookupUser(name);
  } catch (err) {
    if (err instanceof UnknownUserError) throw new ConnectError(err.message, Code.Unauthenticated);
    throw err;
  }
}

export function headerValue(headers: IncomingHttpHeaders, name: string): string | undefined {
  const value = headers[name];
  return Array.isArray(value) ? value[0] : value;
}
