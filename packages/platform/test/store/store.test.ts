import { parseTemplateRef } from "../../src/model/template.js";
import type { KeysetCursor } from "../../src/store/paging.js";
import { DIALECTS, freshStore, type TestStore } from "../helpers/stores.js";

describe.each(DIALECTS)("store on %s", (dialect) => {
  let t: TestStore;
  beforeAll(async () => {
    t = await freshStore(dialect);
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("keeps API keys hashed and finds their team", async () => {
    const team = await t.store.teams.createTeam("Acme", "acme");
    const { key, apiKey: row } = await t.store.teams.createKey(team.id, "ci");
    expect(key).toMatch(/^e2b_[0-9a-f]{40}$/);
    const stored = await t.store.db.kysely
      .selectFrom("api_keys")
      .select("key_hash")
      .where("id", "=", row.id)
      .executeTakeFirstOrThrow();
    expect(stored.key_hash).not.toContain(key.slice(4));
    expect((await t.store.teams.teamForKey(key))?.team.id).toBe(team.id);
    expect(await t.store.teams.teamForKey(`${key}0`)).toBeUndefined();
    expect(await t.store.teams.revokeKey(team.id, row.id)).toBe(true);
    expect(await t.store.teams.teamForKey(key)).toBeUndefined();
    expect(await t.store.teams.revokeKey(team.id, row.id)).toBe(false);
  });

  it("resolves names, aliases, public templates and tags", async () => {
    const a = await t.store.teams.createTeam("A", "team-a");
    const b = await t.store.teams.createTeam("B", "team-b");
    const shared = await t.store.templates.createTemplate(a.id, { public: true });
    const own = await t.store.templates.createTemplate(b.id);
    expect(await t.store.templates.addAlias("team-a", "py", shared.id)).toBe(true);
    expect(await t.store.templates.addAlias("team-b", "py", own.id)).toBe(true);
    expect(await t.store.templates.addAlias("team-b", "py", shared.id)).toBe(false);

    expect((await t.store.templates.resolveTemplate(parseTemplateRef("py"), b))?.id).toBe(own.id);
    expect((await t.store.templates.resolveTemplate(parseTemplateRef("team-a/py:v1"), b))?.id).toBe(
      shared.id,
    );
    expect((await t.store.templates.resolveTemplate(parseTemplateRef(own.id), a))?.id).toBe(own.id);
    expect(await t.store.templates.resolveTemplate(parseTemplateRef("missing"), a)).toBeUndefined();

    const spec = { cpuCount: 1, memoryMB: 256, diskSizeMB: 512, envdVersion: "0.6.4", spec: {}, layers: [] };
    const first = await t.store.templates.createBuild({ templateId: own.id, status: "ready", ...spec });
    const second = await t.store.templates.createBuild({ templateId: own.id, status: "ready", ...spec });
    expect((await t.store.templates.buildForTag(own.id))?.id).toBe(second.id);
    await t.store.templates.setTags(own.id, first.id, ["stable", "default"]);
    expect((await t.store.templates.buildForTag(own.id))?.id).toBe(first.id);
    expect((await t.store.templates.buildForTag(own.id, "stable"))?.id).toBe(first.id);
    expect(await t.store.templates.buildForTag(own.id, "nope")).toBeUndefined();
    expect(await t.store.templates.deleteTags(own.id, ["stable"])).toBe(1);
    expect((await t.store.templates.listTags(own.id)).map((x) => x.tag)).toEqual(["default"]);
  });

  it("pages 250 builds in a stable order", async () => {
    const team = await t.store.teams.createTeam("P", "paging");
    const tpl = await t.store.templates.createTemplate(team.id);
    const spec = { cpuCount: 1, memoryMB: 256, diskSizeMB: 512, envdVersion: "0.6.4", spec: {}, layers: [] };
    const ids = new Set<string>();
    for (let i = 0; i < 250; i++)
      ids.add((await t.store.templates.createBuild({ templateId: tpl.id, status: "ready", ...spec })).id);
    const seen: string[] = [];
    let after: KeysetCursor | undefined;
    for (;;) {
      const page = await t.store.templates.listBuilds(tpl.id, { limit: 100, after });
      seen.push(...page.map((b) => b.id));
      const last = page.at(-1);
      if (page.length < 100 || !last) break;
      after = { time: last.createdAt, id: last.id };
    }
    expect(seen).toHaveLength(250);
    expect(new Set(seen)).toEqual(ids);
    expect(await t.store.templates.countBuilds(tpl.id)).toBe(250);
  });

  it("appends and pages build logs by offset", async () => {
    const team = await t.store.teams.createTeam("L", "logs");
    const tpl = await t.store.templates.createTemplate(team.id);
    const build = await t.store.templates.createBuild({
      templateId: tpl.id,
      status: "building",
      cpuCount: 1,
      memoryMB: 256,
      diskSizeMB: 512,
      envdVersion: "0.6.4",
      spec: {},
      layers: [],
    });
    const entry = (message: string) => ({
      timestamp: new Date().toISOString(),
      level: "info",
      message,
    });
    await t.store.templates.appendLogs(build.id, [entry("a"), entry("b")]);
    await t.store.templates.appendLogs(build.id, [entry("c")]);
    expect((await t.store.templates.logs(build.id, 1, 10)).map((l) => l.message)).toEqual(["b", "c"]);
    expect(await t.store.templates.logs(build.id, 3, 10)).toEqual([]);
  });
});
