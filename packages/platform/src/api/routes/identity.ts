import type { IdentityTokens } from "../../identity/identity-tokens.js";
import type { HandlersFor } from "../handler.js";

type IdentityOps = "getIdentityJwks" | "getOpenIdConfiguration";

/** What relying parties verify sandboxes' identity tokens with (no API key). */
export function identityRoutes(tokens: IdentityTokens): HandlersFor<IdentityOps> {
  return {
    getIdentityJwks: async () => ({ status: 200, body: tokens.jwks() }),
    getOpenIdConfiguration: async () => ({ status: 200, body: tokens.discovery() }),
  };
}
