/**
 * The README's promise for every command: a usage mistake (an unknown flag, a missing argument,
 * a bad value, an unknown subcommand) exits 2, says what was wrong on stderr and does nothing:
 * no store is opened or made, no platform is reached.
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { CONNECTION_ENV, ensureBuilt, X_BIN, x } from "./run-x.js";

const MISTAKES: string[][] = [
  [],
  ["frob"],
  ["serve", "--bogus"],
  ["serve", "--runtime", "kata"],
  ["serve", "--port", "99999"],
  ["serve", "extra"],
  ["cleanup", "--bogus"],
  ["cleanup", "extra"],
  ["keys"],
  ["keys", "create"],
  ["keys", "create", "ci", "--bogus"],
  ["keys", "revoke"],
  ["keys", "rotate"],
  ["keys", "list", "--team"],
  ["team", "create"],
  ["team", "create", "x", "--namespace", "system"],
  ["team", "limits"],
  ["team", "limits", "default", "--cpu", "0"],
  ["team", "rm"],
  ["team", "frob"],
  ["team", "list", "--bogus"],
  ["node", "--bogus"],
  ["node"],
  ["node", "--cluster-secret", "s"],
  ["node", "--cluster-secret", "s", "--database-url", "postgres://db/x", "--name", "no spaces"],
  ["node", "list", "--bogus"],
  ["node", "drain"],
  ["api", "--bogus"],
  ["api"],
  ["api", "--port", "x", "--database-url", "postgres://db/x"],
  ["proxy", "--bogus"],
  ["proxy"],
  ["sandbox", "create", "--bogus"],
  ["sandbox", "create", "--timeout", "soon"],
  ["sandbox", "kill"],
  ["sandbox", "frob"],
  ["template", "build"],
  ["template", "frob"],
  ["template", "install"],
  ["snapshot", "create"],
  ["volume", "create"],
  ["secret", "create"],
  ["webhook", "create"],
];

describe("usage mistakes", () => {
  const saved = { ...process.env };
  let root: string;
  let dataDir: string;

  beforeAll(() => {
    root = mkdtempSync(path.join(os.tmpdir(), "x-cli-usage-"));
    // where every command would look for the platform's store: it must never be made
    dataDir = path.join(root, "data");
    for (const name of [...CONNECTION_ENV, "X_DATABASE_URL", "X_CLUSTER_SECRET"]) delete process.env[name];
    process.env.X_DATA_DIR = dataDir;
    // a platform no command may reach (nothing listens on port 9 here)
    process.env.X_API_URL = "http://127.0.0.1:9";
    process.env.X_API_KEY = `e2b_${"0".repeat(40)}`;
  });

  afterAll(() => {
    process.env = saved;
    rmSync(root, { recursive: true, force: true });
  });

  it.each(MISTAKES.map((argv) => [argv.join(" "), argv]))("x %s exits 2", async (_, argv) => {
    const r = await x(argv as string[]);
    expect({ code: r.code, out: r.out }).toEqual({ code: 2, out: "" });
    expect(r.err).not.toBe("");
    expect(existsSync(dataDir)).toBe(false);
  });

  it("is exit code 2 of the x command itself, which users run", () => {
    ensureBuilt();
    for (const argv of [
      ["keys", "create"],
      ["serve", "--bogus"],
      ["team", "rm"],
    ]) {
      const r = spawnSync(process.execPath, [X_BIN, ...argv], { encoding: "utf8", env: process.env });
      expect({ argv, status: r.status, signal: r.signal }).toEqual({ argv, status: 2, signal: null });
      expect(r.stderr).toMatch(/see 'x \w+( \w+)? --help'/);
    }
    expect(existsSync(dataDir)).toBe(false);
  });
});
