/**
 * Teams over HTTP on SQLite and PostgreSQL: access tokens as bearer credentials, `GET /teams` as
 * `e2b auth` calls it, keys renamed, a team's own limits enforced, team metrics, and a second
 * team refused on every operation that names a resource of the first.
 */
import { openapiDocument } from "@x/platform-client";
import { OpenApiRouter } from "../../src/api/openapi.js";
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

const operations = [...new OpenApiRouter(openapiDocument).operations.values()];

describe.each(DIALECTS)("teams on %s", (dialect) => {
  let api: ApiPlatform;
  const sandboxes: string[] = [];

  async function create(body: Record<string, unknown> = {}, key?: string): Promise<string> {
    const res = await api.request("POST", "/v2/sandboxes", { body: { templateID: "base", ...body }, key });
    expect(res.body).toMatchObject({ sandboxID: expect.any(String) });
    sandboxes.push(res.body.sandboxID);
    return res.body.sandboxID;
  }

  beforeAll(async () => {
    // its webhook points at 127.0.0.1, which an operator must allow
    api = await startApiPlatform(dialect, { allowPrivateWebhooks: ["127.0.0.1"] });
  });

  afterAll(async () => {
    for (const id of sandboxes) await api?.request("DELETE", `/sandboxes/${id}`).catch(() => undefined);
    await api?.stop();
  });

  it("accepts access tokens as bearer credentials; revoked, they stop at once", async () => {
    const created = await api.request("POST", "/access-tokens", { body: { name: "console" } });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      id: expect.any(String),
      name: "console",
      token: expect.stringMatching(/^sk_e2b_[0-9a-f]{40}$/),
      mask: {
        prefix: "sk_e2b_",
        valueLength: 40,
        maskedValuePrefix: created.body.token.slice(7, 11),
        maskedValueSuffix: created.body.token.slice(-4),
      },
      createdAt: expect.any(String),
      lastUsed: null,
    });
    const bearer = { key: null, headers: { Authorization: `Bearer ${created.body.token}` } };
    expect((await api.request("GET", "/v2/sandboxes", bearer)).status).toBe(200);
    const listed = await api.request("GET", "/access-tokens");
    expect(listed.body).toEqual([expect.objectContaining({ id: created.body.id, name: "console" })]);
    expect(JSON.stringify(listed.body)).not.toContain(created.body.token);
    // a token is not an API key, and an API key sent as a bearer token still is one
    expect((await api.request("GET", "/v2/sandboxes", { key: created.body.token })).status).toBe(401);
    const keyAsBearer = { key: null, headers: { Authorization: `Bearer ${api.t.apiKey}` } };
    expect((await api.request("GET", "/v2/sandboxes", keyAsBearer)).status).toBe(200);

    expect(
      (await api.request("DELETE", `/access-tokens/${created.body.id}`, { key: api.other.key })).status,
    ).toBe(404);
    expect((await api.request("DELETE", `/access-tokens/${created.body.id}`)).status).toBe(204);
    const after = await api.request("GET", "/v2/sandboxes", bearer);
    expect(after.body).toEqual({ code: 401, message: "invalid access token" });
    for (const body of [{}, { name: "" }, { name: "x".repeat(101) }])
      expect((await api.request("POST", "/access-tokens", { body })).status).toBe(400);
  });

  it("answers GET /teams as e2b auth expects: with a key, that key; with a token, one key made for it", async () => {
    const team = (await api.t.platform.store.teams.defaultTeam()).id;
    expect((await api.request("GET", "/teams")).body).toEqual([
      { teamID: team, name: "Default team", apiKey: api.t.apiKey, isDefault: true },
    ]);
    const { token, id } = (await api.request("POST", "/access-tokens", { body: { name: "cli" } })).body;
    const bearer = { key: null, headers: { Authorization: `Bearer ${token}` } };
    const first = (await api.request("GET", "/teams", bearer)).body[0].apiKey;
    expect((await api.request("GET", "/v2/sandboxes", { key: first })).status).toBe(200);
    const second = (await api.request("GET", "/teams", bearer)).body[0].apiKey;
    expect(second).not.toBe(first);
    // the key made before for the same token is replaced, not piled up
    expect((await api.request("GET", "/v2/sandboxes", { key: first })).status).toBe(401);
    const names = (await api.request("GET", "/api-keys")).body.map((k: { name: string }) => k.name);
    expect(names.filter((n: string) => n === "CLI login/configure")).toHaveLength(1);
    // revoking the token revokes the key made for it
    await api.request("DELETE", `/access-tokens/${id}`);
    expect((await api.request("GET", "/v2/sandboxes", { key: second })).status).toBe(401);
  });

  it("refreshes and revokes access tokens as e2b auth configure and logout do (OAuth, form-encoded)", async () => {
    const created = await api.request("POST", "/access-tokens", {
      body: { name: "e2b CLI", refreshable: true },
    });
    expect(created.body.refreshToken).toEqual(expect.any(String));
    const form = (fields: Record<string, string>) => ({
      key: null,
      rawBody: new URLSearchParams(fields).toString(),
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    const bearer = (token: string) => ({ key: null, headers: { Authorization: `Bearer ${token}` } });
    const minted = (await api.request("GET", "/teams", bearer(created.body.token))).body[0].apiKey;

    const refreshed = await api.request(
      "POST",
      "/oauth/token",
      form({ grant_type: "refresh_token", refresh_token: created.body.refreshToken, client_id: "e2b-cli" }),
    );
    expect(refreshed.status).toBe(200);
    expect(refreshed.headers.get("cache-control")).toBe("no-store");
    expect(refreshed.body).toEqual({
      access_token: expect.stringMatching(/^sk_e2b_/),
      refresh_token: expect.any(String),
      token_type: "Bearer",
    });
    // the old pair and the key made for it are gone; the new token works
    expect((await api.request("GET", "/v2/sandboxes", bearer(created.body.token))).status).toBe(401);
    expect((await api.request("GET", "/v2/sandboxes", { key: minted })).status).toBe(401);
    expect((await api.request("GET", "/v2/sandboxes", bearer(refreshed.body.access_token))).status).toBe(200);
    const reused = await api.request(
      "POST",
      "/oauth/token",
      form({ grant_type: "refresh_token", refresh_token: created.body.refreshToken }),
    );
    expect(reused.body).toEqual({
      error: "invalid_grant",
      error_description: "the refresh token is unknown, revoked or already used",
    });
    // a refresh token opens nothing itself
    expect((await api.request("GET", "/v2/sandboxes", bearer(refreshed.body.refresh_token))).status).toBe(
      401,
    );
    expect((await api.request("POST", "/oauth/token", form({ grant_type: "password" }))).body.error).toBe(
      "unsupported_grant_type",
    );
    expect(
      (await api.request("POST", "/oauth/token", form({ grant_type: "refresh_token" }))).body.error,
    ).toBe("invalid_request");
    const json = await api.request("POST", "/oauth/token", {
      key: null,
      body: { grant_type: "refresh_token" },
    });
    expect(json.status).toBe(400);

    expect(
      (await api.request("POST", "/oauth/revoke", form({ token: refreshed.body.refresh_token }))).status,
    ).toBe(200);
    expect((await api.request("GET", "/v2/sandboxes", bearer(refreshed.body.access_token))).status).toBe(401);
    // unknown tokens are revoked too, as far as anyone can tell (RFC 7009)
    expect((await api.request("POST", "/oauth/revoke", form({ token: "nope" }))).status).toBe(200);
    expect(
      (await api.request("GET", "/access-tokens")).body.map((t: { name: string }) => t.name),
    ).not.toContain("e2b CLI");
  });

  it("lists a cluster's nodes with their state and capacity, never their addresses", async () => {
    const nodes = api.t.platform.store.nodes;
    expect((await api.request("GET", "/nodes")).body).toEqual([]);
    const capacity = {
      cpus: 8,
      memoryTotalMB: 32_000,
      memoryFreeMB: 20_000,
      sandboxes: 3,
      maxSandboxes: 100,
      load: 0.5,
      runtimes: ["runc", "runsc"],
      pool: { b1: 2, b2: 1 },
    };
    await nodes.register({
      id: "n-test",
      apiUrl: "http://10.9.9.9:3000",
      trafficUrl: "http://10.9.9.9:3002",
      capacity,
    });
    try {
      const listed = await api.request("GET", "/nodes", { key: api.other.key });
      expect(listed.body).toEqual([
        {
          nodeID: "n-test",
          state: "ready",
          startedAt: expect.any(String),
          heartbeatAt: expect.any(String),
          capacity: { ...capacity, pool: undefined, warmPoolMembers: 3 },
        },
      ]);
      expect(JSON.stringify(listed.body)).not.toContain("10.9.9.9");
    } finally {
      await nodes.remove("n-test");
    }
  });

  it("renames keys and shows them with E2B's fields", async () => {
    const created = (await api.request("POST", "/api-keys", { body: { name: "ci" } })).body;
    expect(created).toMatchObject({
      id: created.apiKeyID,
      mask: { prefix: "e2b_", valueLength: 40, maskedValueSuffix: created.key.slice(-4) },
      lastUsed: null,
      createdBy: null,
    });
    const renamed = await api.request("PATCH", `/api-keys/${created.id}`, { body: { name: "ci-2" } });
    expect(renamed.status).toBe(200);
    expect(renamed.body).toMatchObject({ id: created.id, name: "ci-2" });
    expect(
      (await api.request("PATCH", `/api-keys/${created.id}`, { body: { name: "x" }, key: api.other.key }))
        .status,
    ).toBe(404);
    expect((await api.request("PATCH", `/api-keys/${created.id}`, { body: { name: "" } })).status).toBe(400);
    await api.request("DELETE", `/api-keys/${created.id}`);
  });

  it("enforces a team's own limits and shows them with its use", async () => {
    const store = api.t.platform.store;
    const other = api.other;
    await store.teams.setLimits(other.team.id, { sandboxes: 1, timeoutSeconds: 120, cpuCount: 1 });
    try {
      // the base template asks for 2 vCPUs: over this team's limit
      const tooBig = await api.request("POST", "/v2/sandboxes", {
        body: { templateID: "base", timeout: 60 },
        key: other.key,
      });
      expect(tooBig.status).toBe(403);
      expect(tooBig.body.message).toMatch(/asks for 2 vCPUs \(the team's limit is 1\)/);
      await store.teams.setLimits(other.team.id, { cpuCount: null });

      const long = await api.request("POST", "/v2/sandboxes", {
        body: { templateID: "base", timeout: 121 },
        key: other.key,
      });
      expect(long.body).toEqual({ code: 400, message: "timeout must be between 1 and 120 seconds, got 121" });
      const id = await create({ timeout: 60 }, other.key);
      const second = await api.request("POST", "/v2/sandboxes", {
        body: { templateID: "base", timeout: 60 },
        key: other.key,
      });
      expect(second.status).toBe(429);
      expect(
        (await api.request("POST", `/sandboxes/${id}/timeout`, { body: { timeout: 500 }, key: other.key }))
          .status,
      ).toBe(400);
      const build = await api.request("POST", "/v3/templates", {
        body: { name: "big", cpuCount: 2 },
        key: other.key,
      });
      await store.teams.setLimits(other.team.id, { cpuCount: 1 });
      const overCpu = await api.request("POST", "/v3/templates", {
        body: { name: "big", cpuCount: 2 },
        key: other.key,
      });
      expect(overCpu.body).toEqual({ code: 400, message: "CPU count exceeds team limits (max: 1), got 2" });
      expect(build.status).toBe(202);

      const detail = await api.request("GET", `/teams/${other.team.id}`, { key: other.key });
      expect(detail.body).toMatchObject({
        teamID: other.team.id,
        namespace: "other",
        limits: { sandboxes: 1, cpuCount: 1, memoryMB: null, diskSizeMB: null, timeoutSeconds: 120 },
        // the platform's own are finite: the host's (or the operator's) where the team sets none
        effectiveLimits: {
          sandboxes: 1,
          cpuCount: 1,
          memoryMB: expect.any(Number),
          volumes: expect.any(Number),
          forkCount: expect.any(Number),
          timeoutSeconds: 120,
        },
        usage: { liveSandboxes: 1, runningSandboxes: 1, pausedSandboxes: 0, templates: 1, volumes: 0 },
      });
      // the other team's limits are not the first team's
      const mine = await api.request("GET", `/teams/${(await store.teams.defaultTeam()).id}`);
      expect(mine.body.limits).toEqual({
        sandboxes: null,
        cpuCount: null,
        memoryMB: null,
        diskSizeMB: null,
        timeoutSeconds: null,
        volumes: null,
        volumeSizeMB: null,
        templates: null,
        snapshots: null,
        forkCount: null,
        uploads: null,
        uploadsMB: null,
      });
      await api.request("DELETE", `/sandboxes/${id}`, { key: other.key });
      const templates = (await api.request("GET", "/templates", { key: other.key })).body;
      for (const t of templates)
        await api.request("DELETE", `/templates/${t.templateID}`, { key: other.key });
    } finally {
      await store.teams.setLimits(other.team.id, {
        sandboxes: null,
        timeoutSeconds: null,
        cpuCount: null,
      });
    }
  });

  it("has team metrics: concurrency and start rate over time, the max, only for the caller's own team", async () => {
    const team = (await api.t.platform.store.teams.defaultTeam()).id;
    const from = Math.floor(Date.now() / 1000) - 1;
    const id = await create();
    await api.request("DELETE", `/sandboxes/${id}`);
    const to = Math.ceil(Date.now() / 1000) + 1;
    const metrics = await api.request("GET", `/teams/${team}/metrics?start=${from}&end=${to}`);
    expect(metrics.status).toBe(200);
    expect(metrics.body[0]).toEqual({
      timestamp: new Date(from * 1000).toISOString(),
      timestampUnix: from,
      concurrentSandboxes: expect.any(Number),
      sandboxStartRate: expect.any(Number),
    });
    expect(Math.max(...metrics.body.map((m: { concurrentSandboxes: number }) => m.concurrentSandboxes))).toBe(
      1,
    );
    const max = await api.request(
      "GET",
      `/teams/${team}/metrics/max?start=${from}&end=${to}&metric=sandbox_start_rate`,
    );
    expect(max.body).toMatchObject({ value: 1 / 5, timestampUnix: expect.any(Number) });
    expect((await api.request("GET", `/teams/${team}/metrics`)).body.length).toBeLessThanOrEqual(1000);

    const theirs = await api.request("GET", `/teams/${team}/metrics`, { key: api.other.key });
    expect(theirs.body).toEqual({
      code: 403,
      message: `You (${api.other.team.id}) are not authorized to access this team's (${team}) metrics`,
    });
    expect((await api.request("GET", `/teams/${team}/metrics?start=${to}&end=${from}`)).status).toBe(400);
    expect((await api.request("GET", `/teams/${team}/metrics/max?metric=nope`)).status).toBe(400);
    expect((await api.request("GET", `/teams/${team}/metrics/max`)).status).toBe(400);
  });

  it("lists, with scope=usable, the platform's templates and other teams' public ones, marked by owner", async () => {
    const store = api.t.platform.store;
    // another team's templates, one public and one private, on base's own layers
    const base = await store.templates.resolveAlias({ name: "base" }, api.other.team);
    const baseBuild = await store.templates.buildForTag(base!.id);
    const made: string[] = [];
    const template = async (alias: string, isPublic: boolean) => {
      const t = await store.templates.createTemplate(api.other.team.id, { public: isPublic });
      made.push(t.id);
      await store.templates.addAlias(api.other.team.namespace, alias, t.id);
      const { id: _, createdAt: _c, updatedAt: _u, ...build } = baseBuild!;
      await store.templates.createBuild({ ...build, templateId: t.id });
      return t.id;
    };
    const shared = await template("shared", true);
    const hidden = await template("hidden", false);
    const own = (await api.request("POST", "/v3/templates", { body: { name: "mine-listed" } })).body;
    try {
      // E2B's answer stays the team's own
      const plain = (await api.request("GET", "/templates")).body as Array<{
        templateID: string;
        owner: string;
      }>;
      expect(plain.map((t) => t.templateID)).toContain(own.templateID);
      expect(plain.map((t) => t.templateID)).not.toContain(base!.id);
      expect(new Set(plain.map((t) => t.owner))).toEqual(new Set(["team"]));

      const usable = (await api.request("GET", "/templates?scope=usable")).body as Array<{
        templateID: string;
        owner: string;
        names: string[];
        public: boolean;
        buildStatus: string;
      }>;
      const byId = new Map(usable.map((t) => [t.templateID, t]));
      expect(byId.get(own.templateID)).toMatchObject({ owner: "team", names: ["default/mine-listed"] });
      expect(byId.get(base!.id)).toMatchObject({
        owner: "system",
        names: ["system/base"],
        buildStatus: "ready",
      });
      expect(byId.get(shared)).toMatchObject({ owner: "public", names: ["other/shared"], public: true });
      expect(byId.has(hidden)).toBe(false);
      // the team's own first, then the platform's, then other teams'
      const order = usable.map((t) => t.owner);
      expect(order).toEqual(
        [...order].sort(
          (a, b) => ["team", "system", "public"].indexOf(a) - ["team", "system", "public"].indexOf(b),
        ),
      );
      expect((await api.request("GET", "/templates?scope=everything")).status).toBe(400);

      // with its builds, and whose it is
      const detail = (await api.request("GET", `/templates/${base!.id}`)).body;
      expect(detail).toMatchObject({
        owner: "system",
        builds: [expect.objectContaining({ status: "ready" })],
      });
      expect((await api.request("GET", `/templates/${shared}`)).body.owner).toBe("public");
      expect((await api.request("GET", `/templates/${own.templateID}`)).body.owner).toBe("team");
    } finally {
      await api.request("DELETE", `/templates/${own.templateID}`);
      for (const id of made) await api.request("DELETE", `/templates/${id}`, { key: api.other.key });
    }
  });

  it("refuses a second team every operation on the first team's resources, and changes nothing", async () => {
    const store = api.t.platform.store;
    const team = await store.teams.defaultTeam();
    const sandboxID = await create({ timeout: 300 });
    const snapshot = await api.request("POST", `/sandboxes/${sandboxID}/snapshots`, {
      body: { name: "mine" },
    });
    expect(snapshot.status).toBe(200);
    const templateID = (await api.request("GET", "/templates/aliases/mine")).body.templateID as string;
    const buildID = (await api.request("GET", `/templates/${templateID}`)).body.builds[0].buildID as string;
    const volume = (await api.request("POST", "/volumes", { body: { name: "kept", sizeMB: 32 } })).body;
    const key = (await api.request("POST", "/api-keys", { body: { name: "kept" } })).body;
    const token = (await api.request("POST", "/access-tokens", { body: { name: "kept" } })).body;
    const webhook = await api.request("POST", "/events/webhooks", {
      body: {
        name: "kept",
        url: "http://127.0.0.1:9/hook",
        events: ["sandbox.lifecycle.created"],
        signatureSecret: "s3cret-for-tests",
      },
    });
    const secret = (
      await api.request("POST", "/secrets", { body: { name: "kept-secret", value: "kept-value" } })
    ).body;
    const ids: Record<string, string> = {
      secretID: secret.secretID,
      sandboxID,
      templateID,
      buildID,
      volumeID: volume.volumeID,
      apiKeyID: key.id,
      accessTokenID: token.id,
      teamID: team.id,
      webhookID: webhook.body?.id ?? "none",
      alias: "mine",
      hash: "a".repeat(64),
    };
    // bodies valid in form, so each answer is about whose the resource is
    const bodies: Record<string, unknown> = {
      connectSandbox: { timeout: 60 },
      connectSandboxLegacy: { timeout: 60 },
      setSandboxTimeout: { timeout: 60 },
      updateSandboxNetwork: {},
      createSnapshot: {},
      forkSandbox: {},
      pauseSandbox: {},
      resumeSandbox: {},
      refreshSandbox: {},
      updateTemplate: { public: true },
      updateTemplateV2: { public: true },
      startTemplateBuild: { steps: [] },
      updateApiKey: { name: "taken" },
      updateWebhook: { name: "taken" },
      updateSecret: { value: "taken" },
    };
    const tried: string[] = [];
    try {
      for (const op of operations) {
        const names = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1] as string);
        if (names.length === 0 || !op.authenticated) continue;
        const path = op.path.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(ids[name] ?? "x"));
        const body = op.jsonBody ? (bodies[op.id] ?? {}) : undefined;
        const query = op.params.some((p) => p.name === "metric") ? "?metric=concurrent_sandboxes" : "";
        const res = await api.request(op.method, `${path}${query}`, { key: api.other.key, body });
        tried.push(op.id);
        // named in the failure, so a miss says which operation let the other team in
        // an event log answers an unknown sandbox with no events: so too another team's
        const refused =
          [403, 404].includes(res.status) ||
          (res.status === 200 && Array.isArray(res.body) && res.body.length === 0);
        expect({ op: op.id, refused, status: res.status }).toMatchObject({
          op: op.id,
          refused: true,
        });
      }
      expect(tried.length).toBeGreaterThan(25);
      // nothing of the first team changed
      expect((await api.request("GET", `/sandboxes/${sandboxID}`)).body.state).toBe("running");
      expect((await api.request("GET", `/volumes/${volume.volumeID}`)).status).toBe(200);
      expect((await api.request("GET", `/templates/${templateID}`)).body.public).toBe(false);
      expect((await api.request("GET", "/api-keys")).body.map((k: { name: string }) => k.name)).toContain(
        "kept",
      );
      expect(
        (await api.request("GET", "/access-tokens")).body.map((k: { name: string }) => k.name),
      ).toContain("kept");
      expect((await api.request("GET", `/secrets/${secret.secretID}`)).body.currentVersion).toBe(1);
    } finally {
      await api.request("DELETE", `/sandboxes/${sandboxID}`);
      await api.request("DELETE", `/templates/${templateID}`);
      await api.request("DELETE", `/volumes/${volume.volumeID}`);
      await api.request("DELETE", `/api-keys/${key.id}`);
      await api.request("DELETE", `/access-tokens/${token.id}`);
      await api.request("DELETE", `/secrets/${secret.secretID}`);
      if (webhook.body?.id) await api.request("DELETE", `/events/webhooks/${webhook.body.id}`);
    }
  });
});
