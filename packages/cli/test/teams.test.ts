import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore } from "@x/platform";
import { keys } from "../src/keys.js";
import { namespaceFrom, parseLimit, team } from "../src/teams.js";

type Run = (argv: string[], io: { out(t: string): void; err(t: string): void }) => Promise<number>;

/** Runs `x team …` (or `x keys …`) against the store in `dir`, capturing what it prints. */
async function x(command: Run, dir: string, ...argv: string[]) {
  let out = "";
  let err = "";
  const code = await command([...argv, "--data-dir", dir], {
    out: (t) => (out += t),
    err: (t) => (err += t),
  }).catch((e: Error & { exitCode?: number }) => {
    err += e.message;
    return e.exitCode ?? 1;
  });
  return { code, out, err };
}

describe("x team", () => {
  let dir: string;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-cli-team-"));
    const store = await openStore({ dataDir: dir });
    await store.teams.createTeam("System", "system");
    await store.teams.createTeam("Default team", "default");
    await store.close();
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("creates a team with its first key, lists it, sets and clears its limits, and removes it", async () => {
    const created = await x(team, dir, "create", "Research Lab", "--json");
    expect(created).toMatchObject({ code: 0, err: "" });
    const { team: made, apiKey } = JSON.parse(created.out);
    expect(made).toMatchObject({ name: "Research Lab", namespace: "research-lab" });
    const store = await openStore({ dataDir: dir });
    try {
      expect((await store.teams.teamForKey(apiKey.key))?.team.id).toBe(made.id);
    } finally {
      await store.close();
    }
    expect((await x(team, dir, "create", "Research Lab")).err).toMatch(/namespace 'research-lab' exists/);

    const listed = await x(team, dir, "list");
    expect(listed.out).toMatch(/^ID\s+NAMESPACE\s+NAME\s+LIVE\s+MAX SANDBOXES\s+CREATED\n/);
    expect(listed.out).toContain("research-lab");
    expect(listed.out).not.toContain("system");

    const set = await x(
      team,
      dir,
      "limits",
      "research-lab",
      "--sandboxes",
      "3",
      "--timeout",
      "600",
      "--volumes",
      "5",
      "--fork-count",
      "4",
      "--json",
    );
    expect(JSON.parse(set.out)).toEqual({
      sandboxes: 3,
      cpuCount: null,
      memoryMB: null,
      diskSizeMB: null,
      timeoutSeconds: 600,
      volumes: 5,
      volumeSizeMB: null,
      templates: null,
      snapshots: null,
      forkCount: 4,
      uploads: null,
      uploadsMB: null,
    });
    const cleared = await x(team, dir, "limits", made.id, "--sandboxes", "none");
    expect(cleared.out).toMatch(/sandboxes:\s+platform's/);
    expect(cleared.out).toMatch(/timeout:\s+600/);
    expect(cleared.out).toMatch(/fork-count:\s+4/);
    expect(cleared.out).toMatch(/uploads-mb:\s+platform's/);
    expect((await x(team, dir, "limits", "research-lab", "--cpu", "0")).code).toBe(2);

    // its keys, by `x keys --team`
    const key = await x(keys, dir, "create", "ci", "--team", "research-lab", "--json");
    expect(key.code).toBe(0);
    expect((await x(keys, dir, "list", "--team", "Research Lab", "--json")).out).toContain('"ci"');
    expect((await x(keys, dir, "list", "--team", "nope")).code).toBe(1);

    expect(await x(team, dir, "rm", "research-lab")).toMatchObject({ code: 0 });
    expect((await x(team, dir, "list")).out).not.toContain("research-lab");
    expect((await x(team, dir, "rm", "research-lab")).err).toMatch(/no team 'research-lab'/);
  });

  it("keeps a team that still holds something, and the platform's own team", async () => {
    const store = await openStore({ dataDir: dir });
    try {
      const holder = await store.teams.createTeam("Holder", "holder");
      await store.templates.createTemplate(holder.id, { public: false });
    } finally {
      await store.close();
    }
    const refused = await x(team, dir, "rm", "holder");
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(
      /team holder still holds 1 templates or snapshots: kill, delete or move them first/,
    );
    expect((await x(team, dir, "rm", "system")).err).toMatch(/no team 'system'/);
    expect((await x(team, dir, "create", "x", "--namespace", "system")).code).toBe(2);
  });

  it("derives namespaces and parses limits", () => {
    expect(namespaceFrom("  Ops & ML Team ")).toBe("ops-ml-team");
    expect(parseLimit("cpu", "4")).toBe(4);
    expect(parseLimit("cpu", "none")).toBeNull();
    for (const bad of ["0", "-1", "1.5", "lots", ""])
      expect(() => parseLimit("cpu", bad)).toThrow(/positive whole number/);
  });
});
