/**
 * Review H1 and L5 (`/metrics`) through the API: a bare name never reaches another team's
 * template, a template id wins over an alias equal to it, `namespace/alias` still reaches a
 * public template, the platform's own names cannot be taken, and anonymous `/metrics` shows
 * no tenant's ids (with a metrics token, it needs the token).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Team } from "../../src/model/team.js";
import { type ApiPlatform, startApiPlatform } from "../api/support.js";

describe("template names between teams", () => {
  let api: ApiPlatform;
  let teamA: Team;
  const sandboxes: string[] = [];

  beforeAll(async () => {
    api = await startApiPlatform("sqlite");
    teamA = await api.t.platform.defaultTeam();
  });

  afterEach(async () => {
    const keys = [api.t.apiKey, api.other.key];
    for (const id of sandboxes.splice(0)) {
      for (const key of keys) await api.request("DELETE", `/sandboxes/${id}`, { key }).catch(() => undefined);
    }
  });

  afterAll(async () => {
    await api?.stop();
  });

  /** A template of `team` with a ready build (base's layers), under `alias` in `namespace`. */
  async function readyTemplate(team: Team, o: { alias?: string; namespace?: string; public?: boolean }) {
    const { store } = api.t.platform;
    const baseId = (await store.templates.aliasTarget("system", "base"))!;
    const { id: _id, createdAt: _c, updatedAt: _u, ...fields } = (await store.templates.buildForTag(baseId))!;
    const template = await store.templates.createTemplate(team.id, { public: o.public ?? false });
    if (o.alias)
      expect(await store.templates.addAlias(o.namespace ?? team.namespace, o.alias, template.id)).toBe(true);
    const build = await store.templates.createBuild({ ...fields, templateId: template.id });
    await store.templates.setTags(template.id, build.id, ["default"]);
    return template.id;
  }

  /** Creates a sandbox as `key`; its status and (when made) the template it runs. */
  async function create(templateID: string, key: string) {
    const res = await api.request("POST", "/v2/sandboxes", { body: { templateID, timeout: 120 }, key });
    if (res.status === 201) sandboxes.push(res.body.sandboxID);
    return { status: res.status, templateID: res.body?.templateID as string | undefined, body: res.body };
  }

  it("answers team B's bare name with B's own template or 404, never team A's public one", async () => {
    const theirs = await readyTemplate(teamA, { alias: "shared-py", public: true });
    const b = api.other.key;

    const unknown = await create("shared-py", b);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, message: "template 'shared-py' not found" });
    expect((await api.request("GET", "/templates/aliases/shared-py", { key: b })).status).toBe(404);
    // a build of B's from a bare name of A's is refused before it is queued
    const requested = await api.request("POST", "/v3/templates", { body: { name: "b-child" }, key: b });
    expect(requested.status).toBe(202);
    const start = await api.request(
      "POST",
      `/v2/templates/${requested.body.templateID}/builds/${requested.body.buildID}`,
      { body: { fromTemplate: "shared-py", steps: [] }, key: b },
    );
    expect(start.status).toBe(404);

    // named with A's namespace, A's public template is still B's to use
    expect(await create("default/shared-py", b)).toMatchObject({ status: 201, templateID: theirs });
    expect(await create("default/shared-py:default", b)).toMatchObject({ status: 201, templateID: theirs });
    expect((await api.request("GET", "/templates/aliases/default%2Fshared-py", { key: b })).body).toEqual({
      templateID: theirs,
      public: true,
    });

    const own = await readyTemplate(api.other.team, { alias: "shared-py" });
    expect(await create("shared-py", b)).toMatchObject({ status: 201, templateID: own });
    expect(await create("shared-py", api.t.apiKey)).toMatchObject({ status: 201, templateID: theirs });
  });

  it("boots the template with the id asked for, whatever alias another team registered as it", async () => {
    const mine = await readyTemplate(api.other.team, {});
    // team A's public template aliased as B's id (a row made before such names were refused)
    const squatter = await readyTemplate(teamA, { alias: mine, public: true });
    expect(await create(mine, api.other.key)).toMatchObject({ status: 201, templateID: mine });
    expect(await create(`default/${mine}`, api.other.key)).toMatchObject({
      status: 201,
      templateID: squatter,
    });
    // and no such name can be made now
    const refused = await api.request("POST", "/v3/templates", { body: { name: mine } });
    expect(refused.status).toBe(400);
    expect(refused.body.message).toMatch(/template id's form/);
    // another team's private template named explicitly stays 403 (E2B's answer), an unknown id 404
    const hidden = await readyTemplate(teamA, { alias: "a-private" });
    expect((await create(hidden, api.other.key)).status).toBe(403);
    expect((await create("default/a-private", api.other.key)).status).toBe(403);
    expect((await create("a-private", api.other.key)).status).toBe(404);
    expect((await create("ffffffffffffffffffff", api.other.key)).status).toBe(404);
  });

  it("keeps the platform's own template names for the system team", async () => {
    for (const name of ["code-interpreter-v1", "base", "desktop", "mcp-gateway", "other/desktop:v2"]) {
      const res = await api.request("POST", "/v3/templates", { body: { name }, key: api.other.key });
      expect({ name, status: res.status, code: res.body.code }).toEqual({ name, status: 400, code: 400 });
      expect(res.body.message).toMatch(/is reserved for the platform's own templates/);
    }
    const alias = await api.request("POST", "/v3/templates", {
      body: { alias: "code-interpreter-v1" },
      key: api.other.key,
    });
    expect(alias.status).toBe(400);

    const sandbox = await create("base", api.other.key);
    expect(sandbox.status).toBe(201);
    const snapshot = await api.request("POST", `/sandboxes/${sandbox.body.sandboxID}/snapshots`, {
      body: { name: "base" },
      key: api.other.key,
    });
    expect(snapshot.status).toBe(400);
    expect(snapshot.body.message).toMatch(/reserved/);
  });

  it("lets the system team's shipped template win over a team's row of that name made earlier", async () => {
    // before names were reserved, team B published its own 'desktop'
    const legacy = await readyTemplate(api.other.team, { alias: "desktop", public: true });
    expect(await create("desktop", api.other.key)).toMatchObject({ status: 201, templateID: legacy });
    const beforeInstall = await create("desktop", api.t.apiKey);
    expect(beforeInstall.status).toBe(404);
    expect(beforeInstall.body.message).toMatch(/x template install desktop/);

    const system = (await api.t.platform.store.teams.listTeams()).find((t) => t.namespace === "system")!;
    const shipped = await readyTemplate(system, { alias: "desktop", public: true });
    expect(await create("desktop", api.t.apiKey)).toMatchObject({ status: 201, templateID: shipped });
    expect(await create("desktop", api.other.key)).toMatchObject({ status: 201, templateID: shipped });
    expect(await create("other/desktop", api.other.key)).toMatchObject({ status: 201, templateID: legacy });
  });

  it("shows anonymous /metrics no template, team or sandbox ids", async () => {
    const own = await readyTemplate(api.other.team, { alias: "metered" });
    const made = await create("metered", api.other.key);
    expect(made).toMatchObject({ status: 201, templateID: own });
    const res = await fetch(`${api.t.apiUrl}/metrics`);
    expect(res.status).toBe(200);
    const text = await res.text();
    const teams = await api.t.platform.store.teams.listTeams();
    const templates = await api.t.platform.store.templates.listTemplates(api.other.team.id, {
      includePublic: true,
    });
    const ids = [...teams.map((t) => t.id), ...templates.map((t) => t.id), made.body.sandboxID as string];
    expect(ids.filter((id) => text.includes(id))).toEqual([]);
    expect(text).not.toMatch(/template=|team=|sandbox=/);
    // the pools are still counted, summed over templates
    expect(text).toMatch(/^x_warm_pool_takes_total\{runtime="runc",result="miss"\} \d+$/m);
  });
});

describe("/metrics with a metrics token", () => {
  let api: ApiPlatform;
  let dir: string;
  const TOKEN = "metrics-0f1e2d3c4b5a";

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-metrics-token-"));
    const file = path.join(dir, "token");
    writeFileSync(file, `${TOKEN}\n`, { mode: 0o600 });
    api = await startApiPlatform("sqlite", { metricsTokenFile: file });
  });

  afterAll(async () => {
    await api?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("answers 401 without the token, and shows per-template labels with it", async () => {
    const created = await api.request("POST", "/v2/sandboxes", { body: { templateID: "base", timeout: 60 } });
    expect(created.status).toBe(201);
    try {
      const metrics = `${api.t.apiUrl}/metrics`;
      const anonymous = await fetch(metrics);
      expect(anonymous.status).toBe(401);
      expect(await anonymous.json()).toEqual({
        code: 401,
        message: expect.stringContaining("metrics token"),
      });
      expect((await fetch(metrics, { headers: { Authorization: "Bearer nope" } })).status).toBe(401);
      // an API key is a tenant's credential, not the operator's
      expect((await fetch(metrics, { headers: { "X-API-Key": api.t.apiKey } })).status).toBe(401);
      const scraped = await fetch(metrics, { headers: { Authorization: `Bearer ${TOKEN}` } });
      expect(scraped.status).toBe(200);
      expect(await scraped.text()).toContain(
        `x_warm_pool_takes_total{template="${created.body.templateID}",runtime="runc",result="miss"} 1`,
      );
    } finally {
      await api.request("DELETE", `/sandboxes/${created.body.sandboxID}`);
    }
  });
});
