/**
 * API keys, authentication and tenancy over HTTP, on SQLite and PostgreSQL: every operation
 * but /health needs a key, keys are team-scoped, revocation is immediate, and a team's
 * private templates are another team's 403.
 */
import { openapiDocument } from "@x/platform-client";
import { OpenApiRouter } from "../../src/api/openapi.js";
import { parseTemplateRef } from "../../src/model/template.js";
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

const operations = [...new OpenApiRouter(openapiDocument).operations.values()];
const examplePath = (path: string) => path.replace(/\{[^}]+\}/g, "i00000000000000000000");

describe.each(DIALECTS)("API keys and auth on %s", (dialect) => {
  let api: ApiPlatform;

  beforeAll(async () => {
    api = await startApiPlatform(dialect);
  });

  afterAll(async () => {
    await api?.stop();
  });

  it("requires an API key on every operation except /health, signed uploads, OAuth's own and the identity key set", async () => {
    const open = operations.filter((op) => !op.authenticated && !op.path.startsWith("/volumecontent/"));
    // the OAuth endpoints take their credential (a refresh token) in the body; relying parties
    // read the identity tokens' key set and discovery document without one
    expect(open.map((op) => op.id).sort()).toEqual([
      "getHealth",
      "getIdentityJwks",
      "getOpenIdConfiguration",
      "refreshAccessToken",
      "revokeOAuthToken",
      "uploadTemplateFiles",
    ]);
    for (const op of operations.filter((o) => o.authenticated)) {
      for (const key of [null, "", "e2b_0000000000000000000000000000000000000000", "not a key"]) {
        const res = await api.request(op.method, examplePath(op.path), {
          key,
          body: op.jsonBody ? {} : undefined,
        });
        expect({ op: op.id, key, status: res.status, body: res.body }).toEqual({
          op: op.id,
          key,
          status: 401,
          body: { code: 401, message: expect.any(String) },
        });
      }
    }
    // the content API takes a volume's own token, never an API key
    const content = operations.filter((op) => op.path.startsWith("/volumecontent/"));
    expect(content.length).toBe(7);
    for (const op of content) {
      for (const authorization of [undefined, "Bearer ", "Bearer vol_nope", api.t.apiKey]) {
        const res = await api.request(op.method, `${examplePath(op.path)}?path=/x`, {
          headers: authorization === undefined ? {} : { Authorization: authorization },
          body: op.jsonBody ? {} : undefined,
        });
        expect({ op: op.id, authorization, status: res.status }).toEqual({
          op: op.id,
          authorization,
          status: 401,
        });
      }
    }
    expect((await api.request("GET", "/health", { key: null })).body).toEqual({
      status: "ok",
      version: expect.any(String),
    });
  });

  it("matches the key header case-insensitively", async () => {
    for (const name of ["X-API-KEY", "x-api-key", "X-Api-Key"]) {
      const res = await api.request("GET", "/v2/sandboxes", { key: null, headers: { [name]: api.t.apiKey } });
      expect({ name, status: res.status }).toEqual({ name, status: 200 });
    }
  });

  it("lists, creates and revokes keys; the new key works at once and stops working at once", async () => {
    const listed = await api.request("GET", "/api-keys");
    expect(listed.status).toBe(200);
    expect(listed.body).toEqual([
      {
        apiKeyID: expect.any(String),
        id: listed.body[0].apiKeyID,
        name: "first key",
        maskedKey: expect.stringMatching(/^e2b_[0-9a-f]{4}\.\.\.[0-9a-f]{4}$/),
        mask: {
          prefix: "e2b_",
          valueLength: 40,
          maskedValuePrefix: api.t.apiKey.slice(4, 8),
          maskedValueSuffix: api.t.apiKey.slice(-4),
        },
        createdAt: expect.any(String),
        lastUsedAt: expect.any(String),
        lastUsed: listed.body[0].lastUsedAt,
        createdBy: null,
      },
    ]);
    expect(api.t.apiKey.startsWith(listed.body[0].maskedKey.slice(0, 8))).toBe(true);

    const created = await api.request("POST", "/api-keys", { body: { name: "ci" } });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      apiKeyID: expect.any(String),
      id: created.body.apiKeyID,
      name: "ci",
      maskedKey: `${created.body.key.slice(0, 8)}...${created.body.key.slice(-4)}`,
      createdAt: expect.any(String),
      lastUsedAt: null,
      lastUsed: null,
      key: expect.stringMatching(/^e2b_[0-9a-f]{40}$/),
    });
    const key = created.body.key as string;
    expect((await api.request("GET", "/v2/sandboxes", { key })).status).toBe(200);
    const afterUse = await api.request("GET", "/api-keys", { key });
    const ci = afterUse.body.find((k: { name: string }) => k.name === "ci");
    expect(ci.lastUsedAt).toEqual(expect.any(String));
    expect(afterUse.body.map((k: { name: string }) => k.name)).toEqual(["first key", "ci"]);
    // the secret is never listed
    expect(JSON.stringify(afterUse.body)).not.toContain(key);

    // a key may revoke itself; afterwards it is refused
    expect((await api.request("DELETE", `/api-keys/${created.body.apiKeyID}`, { key })).status).toBe(204);
    const refused = await api.request("GET", "/v2/sandboxes", { key });
    expect(refused.status).toBe(401);
    expect(refused.body).toEqual({ code: 401, message: "invalid API key" });
    expect((await api.request("DELETE", `/api-keys/${created.body.apiKeyID}`)).status).toBe(404);
  });

  it("keeps keys within their team", async () => {
    const mine = (await api.request("GET", "/api-keys")).body as Array<{ apiKeyID: string }>;
    const theirs = await api.request("GET", "/api-keys", { key: api.other.key });
    expect(theirs.body.map((k: { name: string }) => k.name)).toEqual(["other key"]);
    const attempt = await api.request("DELETE", `/api-keys/${mine[0]!.apiKeyID}`, { key: api.other.key });
    expect(attempt.status).toBe(404);
    expect(attempt.body.code).toBe(404);
    expect((await api.request("GET", "/api-keys")).body).toHaveLength(mine.length);
    expect((await api.request("GET", "/v2/sandboxes")).status).toBe(200);
  });

  it("keeps a team's private template from another team", async () => {
    const store = api.t.platform.store;
    const [team] = (await store.teams.listTeams()).filter((t) => t.namespace === "default");
    const base = await store.templates.resolveTemplate(parseTemplateRef("base"), team!);
    const {
      id: _id,
      createdAt: _c,
      updatedAt: _u,
      ...buildFields
    } = (await store.templates.buildForTag(base!.id))!;
    const priv = await store.templates.createTemplate(team!.id, { public: false });
    await store.templates.addAlias("default", "secret", priv.id);
    const build = await store.templates.createBuild({ ...buildFields, templateId: priv.id });
    await store.templates.setTags(priv.id, build.id, ["default"]);

    const forbidden: Array<[string, string, unknown?]> = [
      ["GET", `/templates/${priv.id}`],
      ["DELETE", `/templates/${priv.id}`],
      ["PATCH", `/templates/${priv.id}`, { public: true }],
      ["PATCH", `/v2/templates/${priv.id}`, { public: true }],
      ["GET", `/templates/${priv.id}/tags`],
      ["POST", "/templates/tags", { target: "default/secret:default", tags: ["mine"] }],
      ["DELETE", "/templates/tags", { name: "default/secret", tags: ["default"] }],
      ["GET", `/templates/${priv.id}/builds/${build.id}/status`],
      ["GET", `/templates/${priv.id}/builds/${build.id}/logs`],
      ["POST", `/v2/templates/${priv.id}/builds/${build.id}`, { steps: [] }],
      ["GET", `/templates/${priv.id}/files/${"a".repeat(64)}`],
      ["POST", "/v2/sandboxes", { templateID: "default/secret" }],
    ];
    for (const [method, path, body] of forbidden) {
      const res = await api.request(method, path, { key: api.other.key, body });
      expect({ method, path, status: res.status, code: res.body?.code }).toEqual({
        method,
        path,
        status: 403,
        code: 403,
      });
    }
    // names resolve in the caller's own namespace, and lists show only what the team may use
    expect((await api.request("GET", "/templates/aliases/secret", { key: api.other.key })).status).toBe(404);
    expect((await api.request("GET", "/templates", { key: api.other.key })).body).toEqual([]);
    const own = await api.request("GET", `/templates/${priv.id}`);
    expect(own.status).toBe(200);
    expect(own.body.public).toBe(false);
    expect((await api.request("GET", `/templates/${priv.id}/tags`)).body).toEqual([
      expect.objectContaining({ tag: "default", buildID: build.id }),
    ]);
  });

  it("refuses bad key requests", async () => {
    for (const body of [{}, { name: "" }, { name: 7 }, { name: "x".repeat(101) }]) {
      const res = await api.request("POST", "/api-keys", { body });
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
    }
    expect((await api.request("POST", "/api-keys")).status).toBe(400);
    expect((await api.request("POST", "/api-keys", { rawBody: "name=x" })).status).toBe(400);
    expect((await api.request("DELETE", "/api-keys/nope")).status).toBe(404);
    expect((await api.request("PUT", "/api-keys")).status).toBe(405);
  });
});
