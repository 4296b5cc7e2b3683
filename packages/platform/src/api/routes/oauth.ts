import type { Schemas } from "@x/platform-client";
import { invalid } from "../../model/errors.js";
import type { Store } from "../../store/index.js";
import type { ApiRequest, HandlersFor } from "../handler.js";
import { readBody } from "../server-io.js";

/** A form body is a few short fields: anything larger is not one. */
const MAX_FORM_BYTES = 16 * 1024;

/** A form-encoded body (`application/x-www-form-urlencoded`), as OAuth's endpoints take it. */
async function formOf(r: Pick<ApiRequest, "req">): Promise<URLSearchParams> {
  const type = String(r.req.headers["content-type"] ?? "");
  if (!type.startsWith("application/x-www-form-urlencoded"))
    throw invalid(`the body must be application/x-www-form-urlencoded, got '${type || "none"}'`);
  return new URLSearchParams((await readBody(r.req, MAX_FORM_BYTES)).toString("utf8"));
}

const oauthError = (error: Schemas["OAuthError"]["error"], description: string) => ({
  status: 400 as const,
  body: { error, error_description: description },
  headers: { "Cache-Control": "no-store" },
});

/**
 * The two OAuth endpoints `e2b auth` uses after the console's login page gave it an access
 * token and a refresh token: refresh (`auth configure`) and revoke (`auth logout`).
 */
export function oauthRoutes(store: Store): HandlersFor<"refreshAccessToken" | "revokeOAuthToken"> {
  return {
    refreshAccessToken: async (r) => {
      const form = await formOf(r);
      if (form.get("grant_type") !== "refresh_token")
        return oauthError("unsupported_grant_type", "only grant_type=refresh_token is supported");
      const refreshToken = form.get("refresh_token");
      if (!refreshToken) return oauthError("invalid_request", "refresh_token is required");
      const next = await store.teams.refreshAccessToken(refreshToken);
      if (!next) return oauthError("invalid_grant", "the refresh token is unknown, revoked or already used");
      return {
        status: 200,
        body: { access_token: next.accessToken, refresh_token: next.refreshToken, token_type: "Bearer" },
        headers: { "Cache-Control": "no-store" },
      };
    },
    revokeOAuthToken: async (r) => {
      const token = (await formOf(r)).get("token");
      if (!token) throw invalid("token is required");
      await store.teams.revokeByToken(token);
      return { status: 200 };
    },
  };
}
