/**
 * Every sandbox operation of openapi.yaml over HTTP against a real platform (runc sandboxes),
 * on SQLite and on PostgreSQL: happy paths, error statuses, and a second team that must not
 * see the first team's sandboxes.
 */

import { MALFORMED_PLACEHOLDER } from "../../src/model/placeholders.js";
import { parseTemplateRef } from "../../src/model/template.js";
import { createNetworkManager } from "../../src/network/network-manager.js";
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

const MAX_PER_TEAM = 4;

describe.each(DIALECTS)("sandbox API on %s", (dialect) => {
  let api: ApiPlatform;
  /** Sandboxes to kill after each test, with the key of the team that owns them. */
  const created: Array<{ id: string; key?: string }> = [];

  async function create(body: Record<string, unknown> = {}, key?: string): Promise<string> {
    const res = await api.request("POST", "/v2/sandboxes", { body: { templateID: "base", ...body }, key });
    expect(res.status).toBe(201);
    created.push({ id: res.body.sandboxID, key });
    return res.body.sandboxID;
  }

  beforeAll(async () => {
    api = await startApiPlatform(dialect, { maxSandboxesPerTeam: MAX_PER_TEAM });
  });

  afterAll(async () => {
    await api?.stop();
  });

  afterEach(async () => {
    // each test leaves the team without sandboxes, so quotas start from zero
    for (const { id, key } of created.splice(0)) await api.request("DELETE", `/sandboxes/${id}`, { key });
  });

  it("creates, gets and lists sandboxes (v2 and legacy paths)", async () => {
    const res = await api.request("POST", "/v2/sandboxes", {
      body: { templateID: "base", timeout: 120, metadata: { suite: "api", n: "1" }, envVars: { A: "1" } },
    });
    expect(res.status).toBe(201);
    created.push({ id: res.body.sandboxID });
    expect(res.body).toMatchObject({
      templateID: expect.any(String),
      alias: "base",
      envdVersion: "0.6.4",
      domain: "sandbox.localhost",
    });
    expect(res.body.sandboxID).toMatch(/^i[0-9a-f]{20}$/);
    expect(res.body.envdAccessToken).toEqual(expect.any(String));
    const id = res.body.sandboxID as string;

    const legacy = await api.request("POST", "/sandboxes", {
      body: { templateID: "base", metadata: { suite: "api", n: "2" } },
    });
    expect(legacy.status).toBe(201);
    created.push({ id: legacy.body.sandboxID });

    const detail = await api.request("GET", `/sandboxes/${id}`);
    expect(detail.status).toBe(200);
    expect(detail.body).toMatchObject({
      sandboxID: id,
      state: "running",
      metadata: { suite: "api", n: "1" },
      // as in the hosted service: null until the create or an update sets it
      allowInternetAccess: null,
      network: { allowPublicTraffic: true },
      envdAccessToken: res.body.envdAccessToken,
      lifecycle: { onTimeout: "kill", autoResume: false },
      cpuCount: expect.any(Number),
      memoryMB: expect.any(Number),
    });
    expect(Date.parse(detail.body.endAt) - Date.parse(detail.body.startedAt)).toBeCloseTo(120_000, -3);

    const all = await api.request("GET", "/v2/sandboxes");
    expect(all.status).toBe(200);
    expect(all.body.map((s: { sandboxID: string }) => s.sandboxID).sort()).toEqual(
      [id, legacy.body.sandboxID].sort(),
    );

    const filter = encodeURIComponent(`${encodeURIComponent("n")}=${encodeURIComponent("1")}`);
    const filtered = await api.request("GET", `/v2/sandboxes?metadata=${filter}`);
    expect(filtered.body.map((s: { sandboxID: string }) => s.sandboxID)).toEqual([id]);

    const page1 = await api.request("GET", "/v2/sandboxes?limit=1");
    expect(page1.body).toHaveLength(1);
    const next = page1.headers.get("x-next-token");
    expect(next).toEqual(expect.any(String));
    const page2 = await api.request("GET", `/v2/sandboxes?limit=1&nextToken=${next}`);
    expect(page2.body).toHaveLength(1);
    expect(page2.body[0].sandboxID).not.toBe(page1.body[0].sandboxID);
    expect(page2.headers.get("x-next-token")).toBeNull();

    expect((await api.request("GET", "/v2/sandboxes?state=paused")).body).toEqual([]);
    const legacyList = await api.request("GET", "/sandboxes");
    expect(legacyList.status).toBe(200);
    expect(legacyList.body).toHaveLength(2);
  });

  it("lists by start time in either order, after a time, and by template", async () => {
    const first = await create({ metadata: { order: "1" } });
    const second = await create({ metadata: { order: "2" } });
    const third = await create({ metadata: { order: "3" } });
    const ids = async (query: string) =>
      (await api.request("GET", `/v2/sandboxes?${query}`)).body.map(
        (s: { sandboxID: string }) => s.sandboxID,
      );
    expect(await ids("order=desc")).toEqual([third, second, first]);
    expect(await ids("order=asc")).toEqual([first, second, third]);
    // pages keep the order asked for
    const asc1 = await api.request("GET", "/v2/sandboxes?order=asc&limit=2");
    expect(asc1.body.map((s: { sandboxID: string }) => s.sandboxID)).toEqual([first, second]);
    expect(await ids(`order=asc&limit=2&nextToken=${asc1.headers.get("x-next-token")}`)).toEqual([third]);

    const secondStart = (await api.request("GET", `/sandboxes/${second}`)).body.startedAt as string;
    expect(await ids(`order=asc&startedAfter=${encodeURIComponent(secondStart)}`)).toEqual([second, third]);
    // any RFC 3339 form of the same instant
    const offset = new Date(Date.parse(secondStart)).toISOString().replace("Z", "+00:00");
    expect(await ids(`order=asc&startedAfter=${encodeURIComponent(offset)}`)).toEqual([second, third]);
    const bad = await api.request("GET", "/v2/sandboxes?startedAfter=yesterday");
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/startedAfter/);

    const base = (await api.request("GET", `/sandboxes/${first}`)).body.templateID as string;
    expect(await ids("order=asc&template=base")).toEqual([first, second, third]);
    expect(await ids(`order=asc&template=${base}`)).toEqual([first, second, third]);
    expect(await ids("template=no-such-template")).toEqual([]);
  });

  it("refuses bad create requests with 400, 403 and 404", async () => {
    const bad = (body: unknown) => api.request("POST", "/v2/sandboxes", { body });
    expect((await bad({})).status).toBe(400);
    expect((await bad({ templateID: 42 })).status).toBe(400);
    expect((await bad({ templateID: "base", timeout: -1 })).status).toBe(400);
    expect((await bad({ templateID: "base", timeout: 10 ** 8 })).status).toBe(400);
    expect((await bad({ templateID: "base", runtime: "docker" })).status).toBe(400);
    expect((await api.request("POST", "/v2/sandboxes", { rawBody: "{nope" })).status).toBe(400);

    const unknown = await bad({ templateID: "no-such-template" });
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ code: 404, message: expect.stringContaining("no-such-template") });
    expect((await bad({ templateID: "base:no-such-tag" })).status).toBe(404);

    // bad egress policies get the hosted service's messages; parts this server does not
    // enforce are refused, not ignored
    const badDeny = await bad({ templateID: "base", network: { denyOut: ["example.com"] } });
    expect(badDeny).toMatchObject({ status: 400, body: { message: "invalid denied CIDR example.com" } });
    const domainsOpen = await bad({ templateID: "base", network: { allowOut: ["a.example.com"] } });
    expect(domainsOpen.status).toBe(400);
    expect(domainsOpen.body.message).toMatch(/you must include 'ALL_TRAFFIC' in deny out/);
    expect((await bad({ templateID: "base", network: { egressProxy: { address: "p:1080" } } })).status).toBe(
      400,
    );
    expect(
      (await bad({ templateID: "base", iam: { tokens: { t: { audience: "a", tokenType: "b" } } } })).status,
    ).toBe(400);
    expect((await bad({ templateID: "base", volumeMounts: [{ name: "v", path: "/data" }] })).status).toBe(
      400,
    );

    // a private template of the first team: the second team may not start it
    const store = api.t.platform.store;
    const [team] = (await store.teams.listTeams()).filter((t) => t.namespace === "default");
    const base = await store.templates.resolveTemplate(parseTemplateRef("base"), team!);
    const baseBuild = await store.templates.buildForTag(base!.id);
    const priv = await store.templates.createTemplate(team!.id, { public: false });
    await store.templates.addAlias("default", "private-one", priv.id);
    const { id: _id, createdAt: _c, updatedAt: _u, ...buildFields } = baseBuild!;
    const build = await store.templates.createBuild({ ...buildFields, templateId: priv.id });
    await store.templates.setTags(priv.id, build.id, ["default"]);

    const foreign = await api.request("POST", "/v2/sandboxes", {
      body: { templateID: "default/private-one" },
      key: api.other.key,
    });
    expect(foreign.status).toBe(403);
    expect(foreign.body.code).toBe(403);
    expect(
      (await api.request("POST", "/v2/sandboxes", { body: { templateID: priv.id }, key: api.other.key }))
        .status,
    ).toBe(403);
    const own = await create({ templateID: "private-one" });
    expect((await api.request("GET", `/sandboxes/${own}`)).body.templateID).toBe(priv.id);
  });

  it("hides a team's sandboxes from another team (404 everywhere)", async () => {
    const id = await create();
    const other = { key: api.other.key };
    const attempts: Array<[string, string, unknown?]> = [
      ["GET", `/sandboxes/${id}`],
      ["POST", `/sandboxes/${id}/pause`],
      ["POST", `/sandboxes/${id}/resume`, {}],
      ["POST", `/sandboxes/${id}/connect`, { timeout: 10 }],
      ["POST", `/v2/sandboxes/${id}/connect`, {}],
      ["POST", `/sandboxes/${id}/timeout`, { timeout: 10 }],
      ["POST", `/sandboxes/${id}/refreshes`, { duration: 10 }],
      ["GET", `/sandboxes/${id}/metrics`],
      ["GET", `/sandboxes/${id}/logs`],
      ["GET", `/v2/sandboxes/${id}/logs`],
      ["PUT", `/sandboxes/${id}/network`, { allow_internet_access: false }],
      ["DELETE", `/sandboxes/${id}`],
    ];
    for (const [method, path, body] of attempts) {
      const res = await api.request(method, path, { ...other, body });
      expect({ method, path, status: res.status, code: res.body?.code }).toEqual({
        method,
        path,
        status: 404,
        code: 404,
      });
    }
    expect((await api.request("GET", "/v2/sandboxes", other)).body).toEqual([]);
    expect((await api.request("GET", "/sandboxes", other)).body).toEqual([]);
    const batch = await api.request("GET", `/sandboxes/metrics?sandbox_ids=${id}`, other);
    expect(batch.body).toEqual({ sandboxes: {} });
    // and the sandbox is untouched
    const mine = await api.request("GET", `/sandboxes/${id}`);
    expect(mine.body.state).toBe("running");
    expect(mine.body.allowInternetAccess).toBeNull();
  });

  it("answers 404 for unknown and killed sandboxes", async () => {
    const id = await create();
    expect((await api.request("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    for (const target of [id, "i00000000000000000000"]) {
      expect((await api.request("GET", `/sandboxes/${target}`)).status).toBe(404);
      expect((await api.request("DELETE", `/sandboxes/${target}`)).body).toEqual({
        code: 404,
        message: expect.any(String),
      });
      expect((await api.request("POST", `/sandboxes/${target}/pause`)).status).toBe(404);
      expect((await api.request("GET", `/sandboxes/${target}/metrics`)).status).toBe(404);
      expect((await api.request("GET", `/v2/sandboxes/${target}/logs`)).status).toBe(404);
    }
  });

  it("sets timeouts and refreshes", async () => {
    const id = await create({ timeout: 60 });
    const endAt = async () => Date.parse((await api.request("GET", `/sandboxes/${id}`)).body.endAt);

    expect((await api.request("POST", `/sandboxes/${id}/timeout`, { body: { timeout: 600 } })).status).toBe(
      204,
    );
    expect((await endAt()) - Date.now()).toBeGreaterThan(590_000);
    expect((await api.request("POST", `/sandboxes/${id}/timeout`, { body: { timeout: 30 } })).status).toBe(
      204,
    );
    expect((await endAt()) - Date.now()).toBeLessThan(31_000);

    // refreshes only extend
    expect((await api.request("POST", `/sandboxes/${id}/refreshes`, { body: { duration: 10 } })).status).toBe(
      204,
    );
    expect((await endAt()) - Date.now()).toBeGreaterThan(20_000);
    expect(
      (await api.request("POST", `/sandboxes/${id}/refreshes`, { body: { duration: 3000 } })).status,
    ).toBe(204);
    expect((await endAt()) - Date.now()).toBeGreaterThan(2_990_000);
    expect((await api.request("POST", `/sandboxes/${id}/refreshes`)).status).toBe(204);

    expect((await api.request("POST", `/sandboxes/${id}/timeout`, { body: {} })).status).toBe(400);
    expect((await api.request("POST", `/sandboxes/${id}/timeout`, { body: { timeout: -5 } })).status).toBe(
      400,
    );
    expect(
      (await api.request("POST", `/sandboxes/${id}/timeout`, { body: { timeout: 10 ** 9 } })).status,
    ).toBe(400);
    expect((await api.request("POST", `/sandboxes/${id}/timeout`, { body: { timeout: "10" } })).status).toBe(
      400,
    );
    expect(
      (await api.request("POST", `/sandboxes/${id}/refreshes`, { body: { duration: 3601 } })).status,
    ).toBe(400);
  });

  it("pauses, resumes and connects", async () => {
    const id = await create();
    expect((await api.request("POST", `/sandboxes/${id}/resume`, { body: {} })).status).toBe(409);
    const running = await api.request("POST", `/v2/sandboxes/${id}/connect`, { body: { timeout: 100 } });
    expect(running.status).toBe(200);
    expect(running.body.sandboxID).toBe(id);

    expect((await api.request("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
    const paused = await api.request("GET", `/sandboxes/${id}`);
    expect(paused.body).toMatchObject({ state: "paused", pauseKind: "frozen" });
    const again = await api.request("POST", `/sandboxes/${id}/pause`);
    expect(again.status).toBe(409);
    expect(again.body.code).toBe(409);
    expect(
      (await api.request("GET", "/v2/sandboxes?state=paused")).body.map(
        (s: { sandboxID: string }) => s.sandboxID,
      ),
    ).toEqual([id]);

    const resumed = await api.request("POST", `/v2/sandboxes/${id}/connect`, { body: { timeout: 100 } });
    expect(resumed.status).toBe(201);
    expect(resumed.body.envdAccessToken).toBe(running.body.envdAccessToken);
    expect((await api.request("GET", `/sandboxes/${id}`)).body.state).toBe("running");

    expect((await api.request("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
    expect((await api.request("POST", `/sandboxes/${id}/resume`, { body: { timeout: 60 } })).status).toBe(
      201,
    );
    expect((await api.request("POST", `/sandboxes/${id}/connect`)).status).toBe(400);
    expect((await api.request("POST", `/sandboxes/${id}/connect`, { body: { timeout: 60 } })).status).toBe(
      200,
    );
    expect((await api.request("POST", `/v2/sandboxes/${id}/connect`, { body: { timeout: -1 } })).status).toBe(
      400,
    );
  });

  it("reports metrics of a sandbox and of several", async () => {
    const id = await create();
    const second = await create();
    const res = await api.request("GET", `/sandboxes/${id}/metrics`);
    expect(res.status).toBe(200);
    expect(res.body.length).toBeGreaterThanOrEqual(1);
    const [metric] = res.body;
    expect(metric).toEqual({
      timestamp: expect.any(String),
      timestampUnix: expect.any(Number),
      cpuCount: 2,
      cpuUsedPct: expect.any(Number),
      memUsed: expect.any(Number),
      memTotal: 1024 * 1024 * 1024,
      memCache: expect.any(Number),
      diskUsed: expect.any(Number),
      diskTotal: expect.any(Number),
    });
    // envd (node) alone uses some memory, and the sandbox has written its /etc files
    expect(metric.memUsed).toBeGreaterThan(1024 * 1024);
    expect(metric.diskUsed).toBeGreaterThan(0);
    expect(metric.cpuUsedPct).toBeGreaterThanOrEqual(0);
    expect(metric.cpuUsedPct).toBeLessThanOrEqual(100);
    expect(Math.abs(metric.timestampUnix - Date.now() / 1000)).toBeLessThan(10);

    const now = Math.floor(Date.now() / 1000);
    expect(
      (await api.request("GET", `/sandboxes/${id}/metrics?start=${now - 60}&end=${now + 60}`)).body.length,
    ).toBeGreaterThan(0);
    expect((await api.request("GET", `/sandboxes/${id}/metrics?start=${now + 3600}`)).body).toEqual([]);
    expect((await api.request("GET", `/sandboxes/${id}/metrics?end=${now - 3600}`)).body).toEqual([]);
    expect((await api.request("GET", `/sandboxes/${id}/metrics?start=10&end=5`)).status).toBe(400);
    expect((await api.request("GET", `/sandboxes/${id}/metrics?start=-1`)).status).toBe(400);
    expect((await api.request("GET", `/sandboxes/${id}/metrics?start=soon`)).status).toBe(400);

    const batch = await api.request(
      "GET",
      `/sandboxes/metrics?sandbox_ids=${id},${second},i00000000000000000000`,
    );
    expect(batch.status).toBe(200);
    expect(Object.keys(batch.body.sandboxes).sort()).toEqual([id, second].sort());
    expect(batch.body.sandboxes[id].cpuCount).toBe(2);
    expect((await api.request("GET", "/sandboxes/metrics")).status).toBe(400);
    const tooMany = Array.from({ length: 101 }, (_, i) => `i${i}`).join(",");
    expect((await api.request("GET", `/sandboxes/metrics?sandbox_ids=${tooMany}`)).status).toBe(400);

    // a paused sandbox keeps its history but has no latest sample
    expect((await api.request("POST", `/sandboxes/${second}/pause`)).status).toBe(204);
    const afterPause = await api.request("GET", `/sandboxes/metrics?sandbox_ids=${id},${second}`);
    expect(Object.keys(afterPause.body.sandboxes)).toEqual([id]);
    expect((await api.request("GET", `/sandboxes/${second}/metrics`)).body.length).toBeGreaterThan(0);
  });

  it("serves logs: lifecycle events and envd's console, filtered and paged", async () => {
    const id = await create();
    expect((await api.request("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
    expect((await api.request("POST", `/v2/sandboxes/${id}/connect`, { body: {} })).status).toBe(201);

    const res = await api.request("GET", `/v2/sandboxes/${id}/logs`);
    expect(res.status).toBe(200);
    const messages = res.body.logs.map((l: { message: string }) => l.message);
    expect(messages).toEqual(
      expect.arrayContaining(["sandbox created", "sandbox paused", "sandbox resumed", "envd ready"]),
    );
    for (const entry of res.body.logs) {
      expect(entry).toEqual({
        timestamp: expect.any(String),
        level: expect.any(String),
        message: expect.any(String),
        fields: expect.any(Object),
      });
    }
    const times = res.body.logs.map((l: { timestamp: string }) => Date.parse(l.timestamp));
    expect(times).toEqual([...times].sort((a, b) => a - b));
    const ready = res.body.logs.find((l: { message: string }) => l.message === "envd ready");
    expect(ready.fields).toMatchObject({ source: "envd", version: "0.6.4" });
    expect(
      res.body.logs.find((l: { message: string }) => l.message === "sandbox paused").fields,
    ).toMatchObject({ kind: "frozen" });

    const backward = await api.request("GET", `/v2/sandboxes/${id}/logs?direction=backward&limit=2`);
    expect(backward.body.logs).toHaveLength(2);
    expect(Date.parse(backward.body.logs[0].timestamp)).toBe(Math.max(...times));
    expect(Date.parse(backward.body.logs[0].timestamp)).toBeGreaterThanOrEqual(
      Date.parse(backward.body.logs[1].timestamp),
    );

    const search = await api.request("GET", `/v2/sandboxes/${id}/logs?search=paused`);
    expect(search.body.logs.map((l: { message: string }) => l.message)).toEqual(["sandbox paused"]);
    expect((await api.request("GET", `/v2/sandboxes/${id}/logs?search=PAUSED`)).body.logs).toEqual([]);
    expect((await api.request("GET", `/v2/sandboxes/${id}/logs?level=warn`)).body.logs).toEqual([]);
    expect((await api.request("GET", `/v2/sandboxes/${id}/logs?limit=0`)).body.logs).toEqual([]);

    const late = Math.max(...times);
    const fromCursor = await api.request("GET", `/v2/sandboxes/${id}/logs?cursor=${late}`);
    expect(fromCursor.body.logs.every((l: { timestamp: string }) => Date.parse(l.timestamp) >= late)).toBe(
      true,
    );
    expect(fromCursor.body.logs.length).toBeGreaterThan(0);
    const beforeStart = await api.request(
      "GET",
      `/v2/sandboxes/${id}/logs?cursor=${Math.min(...times) - 1}&direction=backward`,
    );
    expect(beforeStart.body.logs).toEqual([]);
    expect(
      (await api.request("GET", `/v2/sandboxes/${id}/logs?cursor=${10 ** 18}&direction=backward`)).body.logs
        .length,
    ).toBe(times.length);

    expect((await api.request("GET", `/v2/sandboxes/${id}/logs?level=trace`)).status).toBe(400);
    expect((await api.request("GET", `/v2/sandboxes/${id}/logs?direction=sideways`)).status).toBe(400);
    expect((await api.request("GET", `/v2/sandboxes/${id}/logs?limit=1001`)).status).toBe(400);

    const legacy = await api.request("GET", `/sandboxes/${id}/logs?limit=3`);
    expect(legacy.status).toBe(200);
    expect(legacy.body.logs).toHaveLength(3);
    expect(legacy.body.logEntries).toHaveLength(3);
    expect(legacy.body.logs[0]).toEqual({
      timestamp: legacy.body.logEntries[0].timestamp,
      line: expect.any(String),
    });
    // the e2b CLI's `sandbox logs` parses each line and upper-cases its level
    for (const { line } of legacy.body.logs) expect(JSON.parse(line).level).toEqual(expect.any(String));
    expect(legacy.body.logEntries).toEqual(res.body.logs.slice(0, 3));
  });

  it("replaces egress rules and header transforms live, echoes them as given, and refuses what it cannot enforce", async () => {
    const id = await create();
    const { networkPrefix, networkCidr } = api.t.platform.config;
    const network = createNetworkManager({ prefix: networkPrefix, cidr: networkCidr });
    const net = await network.get(id);
    expect(net).toBeDefined();
    const rules = async () => (await network.firewallEntry((await network.get(id))!))?.rules;
    const offline = async () => (await rules())?.deny.includes("0.0.0.0/0") ?? false;
    expect(await rules()).toEqual({ allow: [], deny: [], domains: [] });

    const put = (body: unknown) => api.request("PUT", `/sandboxes/${id}/network`, { body });
    const get = async () => (await api.request("GET", `/sandboxes/${id}`)).body;
    expect((await put({ allow_internet_access: false })).status).toBe(204);
    expect(await offline()).toBe(true);
    expect((await get()).allowInternetAccess).toBe(false);

    expect((await put({})).status).toBe(204);
    expect(await offline()).toBe(false);
    expect((await get()).allowInternetAccess).toBeNull();
    expect((await put({ denyOut: ["0.0.0.0/0"] })).status).toBe(204);
    expect(await offline()).toBe(true);
    expect((await put({ allow_internet_access: true, allowOut: [], denyOut: [], rules: {} })).status).toBe(
      204,
    );
    expect(await offline()).toBe(false);

    // lists are stored as given and enforced as canonical CIDRs
    const policy = {
      denyOut: ["198.51.100.0/24", "0.0.0.0/0"],
      allowOut: ["198.51.100.7", "api.example.com"],
    };
    expect((await put(policy)).status).toBe(204);
    expect((await get()).network).toMatchObject(policy);
    // (names live in the platform, the kernel holds addresses)
    expect(await rules()).toMatchObject({ allow: ["198.51.100.7/32"], deny: ["0.0.0.0/0"] });

    // header transforms are stored (domains lower-cased) and echoed with placeholders
    // unresolved; the sandbox's HTTP and HTTPS go to the egress proxy while it has them
    const rule = [{ transform: { headers: { Authorization: "Bearer ${e2b.secrets.k}" } } }];
    expect((await put({ ...policy, rules: { "API.example.com": rule } })).status).toBe(204);
    expect((await get()).network).toMatchObject({ ...policy, rules: { "api.example.com": rule } });
    const transformSet = async () =>
      /set transform \{[^}]*?elements = \{([^}]*)\}/.exec((await network.firewall.describe()) ?? "")?.[1] ??
      "";
    expect(await transformSet()).toContain(`"${net!.hostIf}"`);
    expect((await put(policy)).status).toBe(204);
    expect((await get()).network.rules).toBeUndefined();
    expect(await transformSet()).not.toContain(`"${net!.hostIf}"`);

    for (const [body, message] of [
      [{ denyOut: ["example.com"] }, "invalid denied CIDR example.com"],
      [{ denyOut: ["0.0.0.0"] }, "invalid denied CIDR 0.0.0.0"],
      [{ allowOut: ["10.0.0.0/40"], denyOut: ["0.0.0.0/0"] }, "invalid allowed address 10.0.0.0/40"],
      [{ allowOut: ["bad..name"], denyOut: ["0.0.0.0/0"] }, /invalid allowed domain bad\.\.name/],
      [{ allowOut: ["api.example.com"] }, /you must include 'ALL_TRAFFIC' in deny out/],
      [{ egressProxy: { address: "proxy:1080" } }, /Invalid egress proxy config/],
      [
        { rules: { "*": [{ transform: { headers: { A: "b" } } }] } },
        'Rule domain "*" is not a valid domain name.',
      ],
      [
        { rules: { "a.test": [{ transform: { headers: { A: "${e2b.secrets.}" } } }] } },
        MALFORMED_PLACEHOLDER,
      ],
    ] as const) {
      const res = await put(body);
      expect({ body, status: res.status }).toEqual({ body, status: 400 });
      expect(res.body.message).toMatch(message);
    }
    // a refused update changes nothing
    expect((await get()).network).toMatchObject(policy);
    expect((await put({})).status).toBe(204);
    expect((await put({ allow_internet_access: "no" })).status).toBe(400);
    expect((await api.request("PUT", `/sandboxes/${id}/network`)).status).toBe(400);

    // a paused sandbox's network is not changed (409, as the client expects); once resumed it is
    expect((await api.request("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
    const paused = await put({ allow_internet_access: false });
    expect(paused.status).toBe(409);
    expect(paused.body).toMatchObject({ code: 409, message: expect.stringMatching(/paused/) });
    expect((await api.request("POST", `/v2/sandboxes/${id}/connect`, { body: {} })).status).toBe(201);
    expect((await put({ allow_internet_access: false })).status).toBe(204);
    expect(await offline()).toBe(true);

    // created without internet
    const other = await create({ allow_internet_access: false });
    // (read from the kernel: this manager's index predates the sandbox)
    const otherNet = (await network.list()).find((n) => n.id === other);
    const otherEntry = await network.firewallEntry(otherNet!);
    expect(otherEntry?.rules.deny).toEqual(["0.0.0.0/0"]);
  });

  it("answers 429 with Retry-After past the team's sandbox limit, also under concurrent creates", async () => {
    const attempts = await Promise.all(
      Array.from({ length: MAX_PER_TEAM + 2 }, () =>
        api.request("POST", "/v2/sandboxes", { body: { templateID: "base" } }),
      ),
    );
    for (const res of attempts) if (res.status === 201) created.push({ id: res.body.sandboxID });
    expect(attempts.map((r) => r.status).sort()).toEqual([...Array(MAX_PER_TEAM).fill(201), 429, 429]);
    const refused = attempts.find((r) => r.status === 429)!;
    expect(refused.headers.get("retry-after")).toMatch(/^\d+$/);
    expect(refused.body).toEqual({ code: 429, message: expect.stringContaining(String(MAX_PER_TEAM)) });

    // the limit is per team
    await create({}, api.other.key);
    // paused sandboxes do not count
    expect((await api.request("POST", `/sandboxes/${created[0]!.id}/pause`)).status).toBe(204);
    await create();
    expect((await api.request("POST", "/v2/sandboxes", { body: { templateID: "base" } })).status).toBe(429);
    // nor can a paused one be resumed past the limit, by either path: it stays paused
    const paused = created[0]!.id;
    for (const [method, url] of [
      ["POST", `/sandboxes/${paused}/resume`],
      ["POST", `/sandboxes/${paused}/connect`],
    ] as const) {
      const res = await api.request(method, url, { body: { timeout: 60 } });
      expect(res.status).toBe(429);
      expect(res.body).toEqual({ code: 429, message: expect.stringContaining(String(MAX_PER_TEAM)) });
    }
    expect((await api.request("GET", `/sandboxes/${paused}`)).body.state).toBe("paused");
    // once one of the others is gone, it resumes
    const other = created.pop()!;
    expect((await api.request("DELETE", `/sandboxes/${other.id}`)).status).toBe(204);
    expect(
      (await api.request("POST", `/sandboxes/${paused}/connect`, { body: { timeout: 60 } })).status,
    ).toBe(201);
  });
});
