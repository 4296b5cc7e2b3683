/**
 * `x secret …` in this process against a real platform: a value read from stdin or a file
 * (never an argument) is what the egress proxy gets, updates make versions, and no output of
 * the command shows a value.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestPlatform, type TestPlatform } from "../../platform/test/helpers/platform.js";
import { CONNECTION_ENV, x, xJson } from "./run-x.js";

let p: TestPlatform;
const saved = { ...process.env };
const scratch = mkdtempSync(path.join(os.tmpdir(), "x-secret-cli-"));

beforeAll(async () => {
  for (const name of CONNECTION_ENV) delete process.env[name];
  p = await startTestPlatform({ runtime: "runc" });
  process.env.X_API_URL = p.apiUrl;
  process.env.X_PROXY_URL = p.proxyUrl;
  process.env.X_API_KEY = p.apiKey;
});

afterAll(async () => {
  await p?.stop();
  process.env = saved;
  rmSync(scratch, { recursive: true, force: true });
});

describe("x secret", () => {
  it("creates from stdin, updates from a file, lists and removes, never printing a value", async () => {
    const teamId = (await p.platform.defaultTeam()).id;
    const created = await x(["secret", "create", "GH-Token", "--metadata", "owner=ci", "--json"], {
      stdin: "tok-one\n",
    });
    expect(created.code).toBe(0);
    const info = JSON.parse(created.out);
    expect(info).toMatchObject({ name: "gh-token", currentVersion: 1, metadata: { owner: "ci" } });
    expect(await p.platform.placeholders.secret(teamId, "gh-token")).toBe("tok-one");

    const file = path.join(scratch, "value");
    writeFileSync(file, "tok-two");
    const updated = await x(["secret", "update", info.secretID, "--value-file", file]);
    expect(updated).toMatchObject({ code: 0, out: `${info.secretID} version 2\n` });
    expect(await p.platform.placeholders.secret(teamId, "gh-token")).toBe("tok-two");

    const listed = await x(["secret", "list"]);
    expect(listed.out).toMatch(
      new RegExp(`SECRET\\s+NAME\\s+VERSION\\s+UPDATED\\n${info.secretID}\\s+gh-token\\s+2\\s`),
    );
    expect(`${created.out}${updated.out}${listed.out}`).not.toMatch(/tok-(one|two)/);
    expect(await xJson<Array<{ metadata: object }>>(["secret", "list"])).toEqual([
      expect.objectContaining({ metadata: { owner: "ci" } }),
    ]);

    // no value, no secret: a usage error, and nothing is created
    const none = await x(["secret", "create", "empty"]);
    expect(none.code).toBe(2);
    expect(none.err).toContain("give the value on stdin or with --value-file FILE");
    expect((await x(["secret", "create", "empty"], { stdin: "\n" })).err).toContain("the value is empty");
    const dup = await x(["secret", "create", "gh-token"], { stdin: "x" });
    expect(dup).toMatchObject({
      code: 1,
      err: "creating secret gh-token: Secret cannot be modified in its current state\n",
    });

    expect((await x(["secret", "rm", "gh-token"])).code).toBe(0);
    expect(await p.platform.placeholders.secret(teamId, "gh-token")).toBeUndefined();
    const gone = await x(["secret", "rm", "gh-token"]);
    expect(gone).toMatchObject({ code: 1, err: "deleting secret gh-token: Secret not found\n" });
    expect((await x(["secret", "list"])).out).toBe("no secrets\n");
  });
});
