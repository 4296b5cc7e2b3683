/**
 * Workload identity tokens a sandbox registers on create (`iam.tokens`, E2B's wire): by name,
 * each with the audience its JWT-SVIDs are for. The 400s are E2B's (`"<field>: <message>"`).
 */
import { invalid } from "./errors.js";
import { validIdentityName } from "./placeholders.js";

/** What a registered token is minted for. */
export interface IdentityTokenSpec {
  /** The tokens' `aud`, as the create gave it. */
  audience: string;
}

/** A sandbox's registered tokens, by name. */
export type IdentityTokens = Record<string, IdentityTokenSpec>;

export const MAX_IDENTITY_TOKENS = 5;
export const IDENTITY_TOKEN_TYPE = "JWT-SVID";

/** The create's `iam`, checked: the tokens to register (none for an absent or empty `iam`). */
export function identityTokensOf(
  iam: { tokens?: Record<string, { audience?: string; tokenType?: string }> } | undefined,
): IdentityTokens {
  const entries = Object.entries(iam?.tokens ?? {});
  if (entries.length > MAX_IDENTITY_TOKENS)
    throw invalid(`iam.tokens: too many tokens: ${entries.length} (max ${MAX_IDENTITY_TOKENS})`);
  const tokens: IdentityTokens = {};
  for (const [name, token] of entries) {
    if (name.length === 0) throw invalid("iam.tokens: token name is required");
    if (!validIdentityName(name))
      throw invalid(
        `iam.tokens.${JSON.stringify(name)}: token name must be at most 128 characters without '{', '}' or control characters`,
      );
    if (!token.audience) throw invalid(`iam.tokens.${name}.audience: audience is required`);
    if (token.tokenType !== IDENTITY_TOKEN_TYPE)
      throw invalid(`iam.tokens.${name}.tokenType: only "${IDENTITY_TOKEN_TYPE}" is supported`);
    tokens[name] = { audience: token.audience };
  }
  return tokens;
}
