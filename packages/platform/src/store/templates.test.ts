/**
 * How a template name or id resolves for a team (review H1): an exact id first, then the
 * team's own alias, then the system team's; another team's template only by `namespace/alias`
 * (or its id); the reserved names are the system team's first.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SYSTEM_NAMESPACE, type Team } from "../model/team.js";
import { parseTemplateRef } from "../model/template.js";
import { openStore, type Store } from "./index.js";

describe("template resolution", () => {
  let dir: string;
  let store: Store;
  let a: Team;
  let b: Team;
  let system: Team;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-resolve-"));
    store = await openStore({ dataDir: dir });
    a = await store.teams.createTeam("A", "team-a");
    b = await store.teams.createTeam("B", "team-b");
    system = await store.teams.createTeam("System", SYSTEM_NAMESPACE);
  });

  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  const resolve = async (ref: string, team: Team) =>
    (await store.templates.resolveTemplate(parseTemplateRef(ref), team))?.id;

  async function template(team: Team, alias?: string, namespace = team.namespace) {
    const t = await store.templates.createTemplate(team.id, { public: true });
    if (alias) expect(await store.templates.addAlias(namespace, alias, t.id)).toBe(true);
    return t.id;
  }

  it("never answers a bare name with another team's public template", async () => {
    const theirs = await template(a, "py-public");
    expect(await resolve("py-public", b)).toBeUndefined();
    expect(await resolve("py-public:v1", b)).toBeUndefined();
    expect(await store.templates.resolveAlias({ name: "py-public" }, b)).toBeUndefined();
    expect(await resolve("team-a/py-public", b)).toBe(theirs);
    expect(await resolve("team-a/py-public:v1", b)).toBe(theirs);
    expect(await resolve(theirs, b)).toBe(theirs);
    const own = await template(b, "py-public");
    expect(await resolve("py-public", b)).toBe(own);
    expect(await resolve("py-public", a)).toBe(theirs);
  });

  it("resolves an exact template id before any alias equal to it", async () => {
    const mine = await template(b);
    const squatter = await template(a, mine); // a row made before such names were refused
    expect(await resolve(mine, b)).toBe(mine);
    expect(await resolve(mine, a)).toBe(mine);
    expect(await resolve(`team-a/${mine}`, b)).toBe(squatter);
  });

  it("falls back to the system team's alias after the team's own", async () => {
    const shared = await template(system, "py-system");
    expect(await resolve("py-system", b)).toBe(shared);
    const own = await template(b, "py-system");
    expect(await resolve("py-system", b)).toBe(own);
    expect(await resolve("py-system", a)).toBe(shared);
  });

  it("gives the system team's template for a reserved name over a team's own row of it", async () => {
    const legacy = await template(b, "desktop"); // taken before names were reserved
    expect(await resolve("desktop", b)).toBe(legacy);
    expect(await resolve("desktop", a)).toBeUndefined();
    const shipped = await template(system, "desktop");
    expect(await resolve("desktop", b)).toBe(shipped);
    expect(await resolve("desktop", a)).toBe(shipped);
    expect(await resolve("team-b/desktop", b)).toBe(legacy);
  });
});
