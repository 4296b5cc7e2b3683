import { randomUUID } from "node:crypto";
import { SignJWT } from "jose";
import type { PlaceholderValues } from "../model/placeholders.js";
import { isLive } from "../model/sandbox.js";
import type { Store } from "../store/index.js";
import { IDENTITY_ALG, type IdentityKey, type PublicJwk } from "./identity-key.js";

/** The longest a token lives: relying parties get a short-lived credential. */
export const MAX_TOKEN_SECONDS = 300;
/** A cached token is handed out until this long before it expires, then a fresh one is minted. */
const REFRESH_BEFORE_SECONDS = 60;
/** Past this many cached tokens, the expired ones are dropped. */
const CACHE_SWEEP_SIZE = 1024;

export interface IdentityTokensOptions {
  store: Store;
  key: IdentityKey;
  /** The tokens' `iss`: the platform API's URL, where `/.well-known/…` is served. */
  issuer: string;
  /** The SPIFFE trust domain of the tokens' `sub`. */
  trustDomain: string;
  /** Seconds a token lives, at most 300 (the default). */
  ttlSeconds?: number;
  /** Milliseconds since the epoch; the real clock by default. */
  now?: () => number;
}

/**
 * Mints sandboxes' workload identity tokens (SPIFFE JWT-SVIDs signed with the platform's
 * key) for the names each sandbox registered on create, and publishes what verifies them
 * (a JWKS and an OIDC discovery document). A token is cached per sandbox and name until a
 * minute before it expires.
 */
export class IdentityTokens implements Pick<PlaceholderValues, "identityToken"> {
  private readonly cache = new Map<string, { token: string; expiresAt: number }>();
  private readonly ttlSeconds: number;
  private readonly now: () => number;

  constructor(private readonly o: IdentityTokensOptions) {
    this.ttlSeconds = Math.min(o.ttlSeconds ?? MAX_TOKEN_SECONDS, MAX_TOKEN_SECONDS);
    this.now = o.now ?? Date.now;
  }

  /** The SPIFFE ID of a sandbox: stable over its life, naming its team and template. */
  spiffeId(s: { teamId: string; templateId: string; id: string }): string {
    return `spiffe://${this.o.trustDomain}/team/${s.teamId}/template/${s.templateId}/sandbox/${s.id}`;
  }

  /** A token for the live sandbox's registered token `name`; undefined when it has none of that name. */
  async identityToken(sandboxId: string, name: string): Promise<string | undefined> {
    const sandbox = await this.o.store.sandboxes.get(sandboxId);
    if (!isLive(sandbox)) return undefined;
    const spec =
      sandbox.identityTokens && Object.hasOwn(sandbox.identityTokens, name)
        ? sandbox.identityTokens[name]
        : undefined;
    if (!spec) return undefined;
    const now = this.now();
    const cacheKey = `${sandboxId}\u0000${name}\u0000${spec.audience}`;
    const cached = this.cache.get(cacheKey);
    const refreshBefore = Math.min(REFRESH_BEFORE_SECONDS, this.ttlSeconds / 2) * 1000;
    if (cached && now < cached.expiresAt - refreshBefore) return cached.token;
    const iat = Math.floor(now / 1000);
    const exp = iat + this.ttlSeconds;
    const token = await new SignJWT({})
      .setProtectedHeader({ alg: IDENTITY_ALG, kid: this.o.key.kid, typ: "JWT" })
      .setIssuer(this.o.issuer)
      .setSubject(this.spiffeId(sandbox))
      .setAudience([spec.audience])
      .setIssuedAt(iat)
      .setExpirationTime(exp)
      .setJti(randomUUID())
      .sign(this.o.key.privateKey);
    if (this.cache.size >= CACHE_SWEEP_SIZE) {
      for (const [k, v] of this.cache) if (v.expiresAt <= now) this.cache.delete(k);
    }
    this.cache.set(cacheKey, { token, expiresAt: exp * 1000 });
    return token;
  }

  /** The key set relying parties verify tokens with. */
  jwks(): { keys: PublicJwk[] } {
    return { keys: [this.o.key.publicJwk] };
  }

  /** OpenID Connect discovery for the tokens' issuer. */
  discovery() {
    return {
      issuer: this.o.issuer,
      jwks_uri: `${this.o.issuer.replace(/\/+$/, "")}/.well-known/jwks.json`,
      id_token_signing_alg_values_supported: [IDENTITY_ALG],
      subject_types_supported: ["public"],
      response_types_supported: ["id_token"],
      claims_supported: ["iss", "sub", "aud", "iat", "exp", "jti"],
    };
  }
}
