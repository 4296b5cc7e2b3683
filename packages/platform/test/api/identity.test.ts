/**
 * Workload identity tokens (`iam.tokens`, E2B's wire): the create's 400s in E2B's words, the
 * tokens kept with the sandbox (over pause and resume, carried by forks, never shown by GET), and the JWT-SVIDs
 * the platform mints for the egress proxy, verified as a relying party would: with `jose`
 * against the JWKS the running API publishes. Cached until a minute before expiry, then fresh.
 */
import { createRemoteJWKSet, decodeProtectedHeader, jwtVerify } from "jose";
import { IdentityKey } from "../../src/identity/identity-key.js";
import { IdentityTokens } from "../../src/identity/identity-tokens.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

const AWS = { audience: "sts.amazonaws.com", tokenType: "JWT-SVID" };
const GCP = {
  audience: "//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/x",
  tokenType: "JWT-SVID",
};

describe("identity tokens", () => {
  let api: ApiPlatform;
  let sandboxId: string;

  beforeAll(async () => {
    api = await startApiPlatform("sqlite");
  });
  afterAll(async () => {
    if (sandboxId) await api?.request("DELETE", `/sandboxes/${sandboxId}`);
    await api?.stop();
  });

  it("refuses bad iam on create with E2B's messages", async () => {
    const create = (iam: unknown) =>
      api.request("POST", "/v2/sandboxes", { body: { templateID: "base", iam } });
    const six = Object.fromEntries(Array.from({ length: 6 }, (_, i) => [`t${i}`, AWS]));
    const cases: Array<[unknown, string]> = [
      [{ tokens: six }, "iam.tokens: too many tokens: 6 (max 5)"],
      [{ tokens: { aws: { tokenType: "JWT-SVID" } } }, "iam.tokens.aws.audience: audience is required"],
      [
        { tokens: { aws: { audience: "", tokenType: "JWT-SVID" } } },
        "iam.tokens.aws.audience: audience is required",
      ],
      [
        { tokens: { aws: { audience: "a", tokenType: "OIDC" } } },
        'iam.tokens.aws.tokenType: only "JWT-SVID" is supported',
      ],
      [{ tokens: { aws: { audience: "a" } } }, 'iam.tokens.aws.tokenType: only "JWT-SVID" is supported'],
      [{ tokens: { "": AWS } }, "iam.tokens: token name is required"],
      [
        { tokens: { "a}b": AWS } },
        "iam.tokens.\"a}b\": token name must be at most 128 characters without '{', '}' or control characters",
      ],
    ];
    for (const [iam, message] of cases) {
      const res = await create(iam);
      expect({ status: res.status, body: res.body }).toEqual({ status: 400, body: { code: 400, message } });
    }
  });

  it("mints JWT-SVIDs that verify against the published JWKS, cached, for registered names only", async () => {
    const created = await api.request("POST", "/v2/sandboxes", {
      body: { templateID: "base", timeout: 120, iam: { tokens: { aws: AWS, gcp: GCP } } },
    });
    expect(created.status).toBe(201);
    sandboxId = created.body.sandboxID;
    const detail = await api.request("GET", `/sandboxes/${sandboxId}`);
    expect(JSON.stringify(detail.body)).not.toContain("sts.amazonaws.com");
    expect(detail.body.iam).toBeUndefined();

    // what relying parties read, without an API key
    const discovery = await fetch(`${api.t.apiUrl}/.well-known/openid-configuration`);
    expect(discovery.status).toBe(200);
    const doc = (await discovery.json()) as { issuer: string; jwks_uri: string };
    expect(doc).toMatchObject({
      issuer: api.t.apiUrl,
      jwks_uri: `${api.t.apiUrl}/.well-known/jwks.json`,
      id_token_signing_alg_values_supported: ["ES256"],
    });
    const jwks = createRemoteJWKSet(new URL(doc.jwks_uri));

    const { placeholders } = api.t.platform;
    const token = await placeholders.identityToken(sandboxId, "aws");
    if (!token) throw new Error("no token for a registered name");
    const { payload, protectedHeader } = await jwtVerify(token, jwks, {
      issuer: doc.issuer,
      audience: "sts.amazonaws.com",
      algorithms: ["ES256"],
    });
    const team = await api.t.platform.defaultTeam();
    const sandbox = await api.t.platform.store.sandboxes.get(sandboxId);
    expect(payload.sub).toBe(
      `spiffe://sandbox.localhost/team/${team.id}/template/${sandbox?.templateId}/sandbox/${sandboxId}`,
    );
    expect(payload.aud).toEqual(["sts.amazonaws.com"]);
    expect(payload.exp! - payload.iat!).toBeLessThanOrEqual(300);
    expect(payload.exp! * 1000).toBeGreaterThan(Date.now());
    expect(payload.jti).toEqual(expect.any(String));
    const published = (await (await fetch(doc.jwks_uri)).json()) as {
      keys: Array<{ kid: string; d?: string }>;
    };
    expect(protectedHeader.kid).toBe(published.keys[0]?.kid);
    expect(published.keys[0]?.d).toBeUndefined();

    // another audience does not accept it; the other name has its own audience
    await expect(jwtVerify(token, jwks, { audience: "someone-else" })).rejects.toThrow();
    const gcp = await placeholders.identityToken(sandboxId, "gcp");
    expect((await jwtVerify(gcp!, jwks, { audience: GCP.audience })).payload.sub).toBe(payload.sub);

    // cached: the same token again; unknown names and sandboxes have none
    expect(await placeholders.identityToken(sandboxId, "aws")).toBe(token);
    expect(await placeholders.identityToken(sandboxId, "azure")).toBeUndefined();
    expect(await placeholders.identityToken(sandboxId, "toString")).toBeUndefined();
    expect(await placeholders.identityToken("i0000000000000000000", "aws")).toBeUndefined();

    // kept over pause and resume
    expect((await api.request("POST", `/sandboxes/${sandboxId}/pause`)).status).toBe(204);
    expect(
      (await api.request("POST", `/sandboxes/${sandboxId}/resume`, { body: { timeout: 120 } })).status,
    ).toBe(201);
    expect((await api.t.platform.store.sandboxes.get(sandboxId))?.identityTokens).toEqual({
      aws: { audience: AWS.audience },
      gcp: { audience: GCP.audience },
    });
    expect(await placeholders.identityToken(sandboxId, "aws")).toEqual(expect.any(String));

    // a fork carries its source's tokens, minted for its own id
    const forked = await api.request("POST", `/sandboxes/${sandboxId}/fork`, {
      body: { count: 1, timeout: 120 },
    });
    expect(forked.status).toBe(201);
    const forkId: string = forked.body[0].sandbox.sandboxID;
    try {
      const forkToken = await placeholders.identityToken(forkId, "gcp");
      const forkClaims = (await jwtVerify(forkToken!, jwks, { audience: GCP.audience })).payload;
      expect(forkClaims.sub).toMatch(new RegExp(`/sandbox/${forkId}$`));
    } finally {
      await api.request("DELETE", `/sandboxes/${forkId}`);
    }

    // a minute before expiry a fresh token is minted (a clock of the test's own)
    let clock = Date.now();
    const minter = new IdentityTokens({
      store: api.t.platform.store,
      key: (await IdentityKey.open({ dataDir: api.t.platform.config.dataDir })).key,
      issuer: doc.issuer,
      trustDomain: "sandbox.localhost",
      now: () => clock,
    });
    const first = await minter.identityToken(sandboxId, "aws");
    clock += 230_000;
    expect(await minter.identityToken(sandboxId, "aws")).toBe(first);
    clock += 15_000;
    const fresh = await minter.identityToken(sandboxId, "aws");
    expect(fresh).not.toBe(first);
    const verified = await jwtVerify(fresh!, jwks, { audience: AWS.audience, currentDate: new Date(clock) });
    expect(verified.payload.iat).toBe(Math.floor(clock / 1000));
    expect(decodeProtectedHeader(fresh!).alg).toBe("ES256");

    // a killed sandbox has no identity
    expect((await api.request("DELETE", `/sandboxes/${sandboxId}`)).status).toBe(204);
    expect(await placeholders.identityToken(sandboxId, "aws")).toBeUndefined();
  });
});
