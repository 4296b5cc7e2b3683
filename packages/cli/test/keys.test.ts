import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore } from "@x/platform";
import { x as runX } from "./run-x.js";

/** Runs `x keys …` against the store in `dir`, capturing what it prints. */
const x = (dir: string, ...argv: string[]) => runX(["keys", ...argv, "--data-dir", dir]);

describe("x keys", () => {
  let dir: string;

  beforeEach(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-cli-keys-"));
    // what the platform's first start leaves: the system team and the default team
    const store = await openStore({ dataDir: dir });
    await store.teams.createTeam("System", "system");
    await store.teams.createTeam("Default team", "default");
    await store.close();
  });

  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("creates a key that authenticates, lists it masked and revokes it", async () => {
    const created = await x(dir, "create", "ci", "--json");
    expect(created).toMatchObject({ code: 0, err: "" });
    const key = JSON.parse(created.out);
    expect(key).toEqual({
      apiKeyID: expect.any(String),
      id: key.apiKeyID,
      name: "ci",
      maskedKey: expect.stringMatching(/^e2b_[0-9a-f]{4}\.\.\.[0-9a-f]{4}$/),
      mask: {
        prefix: "e2b_",
        valueLength: 40,
        maskedValuePrefix: key.key.slice(4, 8),
        maskedValueSuffix: key.key.slice(-4),
      },
      createdAt: expect.any(String),
      lastUsedAt: null,
      lastUsed: null,
      createdBy: null,
      key: expect.stringMatching(/^e2b_[0-9a-f]{40}$/),
    });

    const store = await openStore({ dataDir: dir });
    try {
      const owner = await store.teams.teamForKey(key.key);
      expect(owner?.team.namespace).toBe("default");
    } finally {
      await store.close();
    }

    const listed = await x(dir, "list", "--json");
    const { key: _secret, ...shown } = key;
    expect(JSON.parse(listed.out)).toEqual([shown]);
    const text = await x(dir, "list");
    expect(text.out).toMatch(/^ID\s+NAME\s+KEY\s+CREATED\s+LAST USED\n/);
    expect(text.out).toContain(key.maskedKey);
    expect(text.out).not.toContain(key.key);

    expect(await x(dir, "revoke", key.apiKeyID, "--json")).toEqual({
      code: 0,
      out: `${JSON.stringify({ apiKeyID: key.apiKeyID, revoked: true }, null, 2)}\n`,
      err: "",
    });
    expect(JSON.parse((await x(dir, "list", "--json")).out)).toEqual([]);
    const again = await x(dir, "revoke", key.apiKeyID);
    expect(again.code).toBe(1);
    expect(again.err).toContain(key.apiKeyID);
  });

  it("prints the key once in plain text and explains mistakes", async () => {
    const created = await x(dir, "create", "laptop");
    expect(created.code).toBe(0);
    expect(created.out).toMatch(
      /^created key 'laptop' \(\w+\) for team default; it is shown only now:\ne2b_[0-9a-f]{40}\n$/,
    );
    expect((await x(dir, "create")).code).toBe(2);
    expect((await x(dir, "revoke")).code).toBe(2);
    expect((await x(dir, "rotate")).code).toBe(2);
    expect((await x(dir)).code).toBe(2);
    expect((await x(dir, "--help")).code).toBe(0);
    expect(await x(dir, "list", "--bogus")).toMatchObject({ code: 2, err: expect.stringMatching(/--bogus/) });
  });

  it("needs a platform that has started once", async () => {
    const empty = mkdtempSync(path.join(os.tmpdir(), "x-cli-empty-"));
    try {
      await expect(x(empty, "list")).rejects.toThrow(/start the platform once/);
    } finally {
      rmSync(empty, { recursive: true, force: true });
    }
  });
});
