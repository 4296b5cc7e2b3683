/**
 * E2B's own CLI, @e2b/cli 2.19.0, unchanged, against the platform as a new user drives it:
 * the `e2b` binary run by Node with E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY set, an empty
 * home (no ~/.e2b of this machine's user) and nothing on stdin. One runtime is enough here.
 */
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { stripVTControlCharacters } from "node:util";
import { Sandbox } from "e2b";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

const CLI = path.join(path.dirname(require.resolve("@e2b/cli/package.json")), "dist/index.js");

interface CliResult {
  code: number | null;
  /** Without ANSI colours. */
  stdout: string;
  stderr: string;
}

/** A line of `sandbox logs` in its pretty format: `[<date> <time>Z] <LEVEL> {…}`. */
const PRETTY_LOG_LINE = /^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.\d{3}Z\] (DEBUG|INFO|WARN|ERROR) +\{.*\}$/;

describe("@e2b/cli 2.19.0 on runc", () => {
  let t: TestPlatform;
  let home: string;
  let restoreEnv = () => {};
  let env: NodeJS.ProcessEnv = {};

  /**
   * Runs `e2b <args>` to its end: exit code and output, colours stripped. Nothing is on its
   * stdin unless `input` is given: then a pipe gives that and is closed.
   */
  function e2b(
    args: string[],
    opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; input?: string } = {},
  ): Promise<CliResult> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [CLI, ...args], {
        cwd: home,
        env: opts.env ?? env,
        // /dev/null is not "piped" stdin to `sandbox exec`; a pipe is
        stdio: [opts.input === undefined ? "ignore" : "pipe", "pipe", "pipe"],
      });
      child.stdin?.end(opts.input);
      let stdout = "";
      let stderr = "";
      child.stdout?.setEncoding("utf8").on("data", (d: string) => {
        stdout += d;
      });
      child.stderr?.setEncoding("utf8").on("data", (d: string) => {
        stderr += d;
      });
      const timer = setTimeout(() => {
        child.kill("SIGKILL");
        reject(new Error(`e2b ${args.join(" ")} did not end in time\nstdout: ${stdout}\nstderr: ${stderr}`));
      }, opts.timeoutMs ?? 90_000);
      child.on("error", reject);
      child.on("close", (code) => {
        clearTimeout(timer);
        resolve({
          code,
          stdout: stripVTControlCharacters(stdout),
          stderr: stripVTControlCharacters(stderr),
        });
      });
    });
  }

  /** `e2b <args>` that must succeed: its result, or an error that shows what it printed. */
  async function ok(args: string[]): Promise<CliResult> {
    const r = await e2b(args);
    if (r.code !== 0) {
      throw new Error(`e2b ${args.join(" ")} exited ${r.code}\nstdout: ${r.stdout}\nstderr: ${r.stderr}`);
    }
    return r;
  }

  /** `e2b sandbox create -d`: the id it prints; the sandbox is killed after the test. */
  async function createDetached(made: string[]): Promise<string> {
    const r = await ok(["sandbox", "create", "-d", "--timeout", "300"]);
    const id = r.stdout.trim();
    expect(id).toMatch(/^[a-z0-9]+$/);
    made.push(id);
    return id;
  }

  /** Kills, through the platform, what a test made, whatever became of the test. */
  const killAll = (ids: string[]) => Promise.all(ids.map((id) => Sandbox.kill(id).catch(() => false)));

  beforeAll(async () => {
    t = await startTestPlatform({ runtime: "runc" });
    restoreEnv = pointE2bClient(t);
    home = mkdtempSync(path.join(os.tmpdir(), "x-e2b-cli-home-"));
    env = {
      PATH: process.env.PATH,
      HOME: home,
      NO_UPDATE_NOTIFIER: "1",
      E2B_API_URL: process.env.E2B_API_URL,
      E2B_SANDBOX_URL: process.env.E2B_SANDBOX_URL,
      E2B_API_KEY: process.env.E2B_API_KEY,
    };
  });

  afterAll(async () => {
    restoreEnv();
    await t?.stop();
    if (home) rmSync(home, { recursive: true, force: true });
  }, 120_000);

  test("auth info and template list", async () => {
    // an API key in the environment is not a login: `auth info` reads only ~/.e2b
    expect((await ok(["auth", "info"])).stdout).toContain("Not logged in");

    // a new team owns no templates: `base` is the platform's, not listed (as on E2B)
    const none = await ok(["template", "list"]);
    expect(none.stderr).toBe("");
    expect(none.stdout.trim()).toBe("No templates found.");
    expect(JSON.parse((await ok(["template", "list", "-f", "json"])).stdout)).toEqual([]);

    // a hand-written config with the project's key (what `auth login` writes) is a login
    const configHome = mkdtempSync(path.join(os.tmpdir(), "x-e2b-cli-config-"));
    try {
      mkdirSync(path.join(configHome, ".e2b"), { mode: 0o700 });
      writeFileSync(
        path.join(configHome, ".e2b", "config.json"),
        JSON.stringify({
          version: 2,
          identity: { email: "dev@example.com" },
          oauth: {
            token_endpoint: "http://127.0.0.1:9/t",
            revoke_endpoint: "http://127.0.0.1:9/r",
            client_id: "x",
          },
          tokens: { access_token: "a", refresh_token: "r" },
          projectName: "default",
          projectId: (await t.platform.defaultTeam()).id,
          projectApiKey: t.apiKey,
        }),
        { mode: 0o600 },
      );
      const { E2B_API_KEY: _key, ...withoutKey } = env;
      const configEnv = { ...withoutKey, HOME: configHome };
      const info = await e2b(["auth", "info"], { env: configEnv });
      expect(info.code).toBe(0);
      expect(info.stdout).toContain("You are logged in as dev@example.com");
      const list = await e2b(["sandbox", "list", "-f", "json"], { env: configEnv });
      expect(list).toMatchObject({ code: 0, stderr: "" });
      expect(JSON.parse(list.stdout)).toEqual(expect.any(Array));
    } finally {
      rmSync(configHome, { recursive: true, force: true });
    }
  });

  test("create -d, list, info, exec, logs, metrics, kill", async () => {
    const made: string[] = [];
    try {
      const id = await createDetached(made);

      const table = await ok(["sandbox", "list"]);
      expect(table.stdout).toContain(id);
      const listed = JSON.parse((await ok(["sandbox", "list", "-f", "json"])).stdout) as {
        sandboxId: string;
        state: string;
        templateId: string;
      }[];
      expect(listed.find((s) => s.sandboxId === id)).toMatchObject({ state: "running" });

      const info = await ok(["sandbox", "info", id]);
      expect(info.stdout).toContain(`Sandbox info for ${id}:`);
      expect(JSON.parse((await ok(["sandbox", "info", id, "-f", "json"])).stdout)).toMatchObject({
        sandboxId: id,
        state: "running",
      });

      expect(await e2b(["sandbox", "exec", id, "echo", "hello from the cli"])).toEqual({
        code: 0,
        stdout: "hello from the cli\n",
        stderr: "",
      });
      // several words are quoted for the shell; the remote exit code is the CLI's
      expect(await e2b(["sandbox", "exec", id, "sh", "-c", "echo out; echo err >&2; exit 3"])).toEqual({
        code: 3,
        stdout: "out\n",
        // envd's end event says why, as E2B's does; the CLI prints it
        stderr: "err\nexit status 3\n",
      });
      expect((await ok(["sandbox", "exec", "-u", "root", id, "whoami"])).stdout).toBe("root\n");
      // piped stdin reaches the command, and its end is an end of file (envd's CloseStdin)
      expect(await e2b(["sandbox", "exec", id, "wc", "-l"], { input: "one\ntwo\n" })).toEqual({
        code: 0,
        stdout: "2\n",
        stderr: "",
      });

      // every legacy log line carries a level: no crash, and pretty lines show it
      const logs = await ok(["sandbox", "logs", id]);
      expect(logs.stderr).toBe("");
      const pretty = logs.stdout.split("\n").filter((l) => l.startsWith("["));
      expect(pretty.length).toBeGreaterThan(0);
      for (const line of pretty) expect(line).toMatch(PRETTY_LOG_LINE);
      expect(logs.stdout).toContain(`Logs for sandbox ${id}:`);

      const asJson = await ok(["sandbox", "logs", id, "--format", "json"]);
      const entries = asJson.stdout
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as { timestamp: string; level: string; logger: string });
      expect(entries.length).toBeGreaterThan(0);
      for (const e of entries) {
        // the server's own level (lower case, as envd's are), which the CLI filters on
        expect(["INFO", "WARN", "ERROR"]).toContain(e.level.toUpperCase());
        expect(typeof e.logger).toBe("string");
        expect(Number.isNaN(Date.parse(e.timestamp))).toBe(false);
      }

      const warn = await ok(["sandbox", "logs", id, "--level", "WARN", "--format", "json"]);
      for (const line of warn.stdout.split("\n").filter((l) => l.trim() !== "")) {
        expect(["WARN", "ERROR"]).toContain((JSON.parse(line) as { level: string }).level.toUpperCase());
      }
      const debug = await ok(["sandbox", "logs", id, "--level", "DEBUG", "--format", "json"]);
      expect(debug.stdout.split("\n").filter((l) => l.trim() !== "").length).toBeGreaterThanOrEqual(
        entries.length,
      );

      const metrics = await ok(["sandbox", "metrics", id]);
      expect(metrics.stdout).toContain(`Metrics for sandbox ${id}:`);
      expect(metrics.stdout).toMatch(
        /CPU: +[\d.]+% \/ +\d+ Cores? \| Memory: +\d+ \/ \d+ +MiB \| Disk: +\d+ \/ \d+ +MiB/,
      );
      const metricJson = await ok(["sandbox", "metrics", id, "--format", "json"]);
      const samples = metricJson.stdout
        .split("\n")
        .filter((l) => l.trim() !== "")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      expect(samples[0]).toMatchObject({
        cpuCount: expect.any(Number),
        cpuUsedPct: expect.any(Number),
        memUsed: expect.any(Number),
        memTotal: expect.any(Number),
      });

      const killed = await ok(["sandbox", "kill", id]);
      expect(killed.stdout).toContain(`Sandbox ${id} has been killed`);
      // the CLI says so on stderr, and still exits 0
      const again = await e2b(["sandbox", "kill", id]);
      expect(again.code).toBe(0);
      expect(again.stderr).toContain(`Sandbox ${id} wasn't found`);
      const gone = await e2b(["sandbox", "info", id]);
      expect(gone.code).toBe(1);
      expect(gone.stderr).toContain(`Sandbox ${id} wasn't found`);
      expect((await ok(["sandbox", "list"])).stdout).not.toContain(id);
    } finally {
      await killAll(made);
    }
  });

  test("pause, then resume: the sandbox goes on; snapshots are templates", async () => {
    const made: string[] = [];
    try {
      const id = await createDetached(made);
      await ok(["sandbox", "exec", id, "sh", "-c", "echo kept > /home/user/kept.txt"]);

      expect((await ok(["sandbox", "pause", id])).stdout).toContain(`Sandbox ${id} has been paused`);
      expect((await ok(["sandbox", "pause", id])).stdout).toContain(`Sandbox ${id} is already paused`);
      const paused = JSON.parse((await ok(["sandbox", "list", "-s", "paused", "-f", "json"])).stdout) as {
        sandboxId: string;
        state: string;
      }[];
      expect(paused.find((s) => s.sandboxId === id)).toMatchObject({ state: "paused" });
      expect((await ok(["sandbox", "list"])).stdout).not.toContain(id);
      expect(JSON.parse((await ok(["sandbox", "info", id, "-f", "json"])).stdout)).toMatchObject({
        state: "paused",
      });

      expect((await ok(["sandbox", "resume", id])).stdout).toContain(`Sandbox ${id} has been resumed`);
      expect((await ok(["sandbox", "exec", id, "cat", "/home/user/kept.txt"])).stdout).toBe("kept\n");

      // a snapshot is a template of the team's: `template list` shows it
      const snap = await ok(["sandbox", "snapshot", "create", id, "-n", "cli-snap"]);
      const snapshotId = /Created snapshot (\S+) from sandbox/.exec(snap.stdout)?.[1];
      expect(snapshotId).toBeDefined();
      const snapshots = JSON.parse((await ok(["sandbox", "snapshot", "list", id, "-f", "json"])).stdout) as {
        snapshotId: string;
        names: string[];
      }[];
      expect(snapshots.map((s) => s.snapshotId)).toEqual([snapshotId]);
      const templates = await ok(["template", "list"]);
      expect(templates.stdout).toMatch(/TEMPLATE ID +TEMPLATE NAME/);
      expect(templates.stdout).toContain("cli-snap");
      const listed = JSON.parse((await ok(["template", "list", "-f", "json"])).stdout) as {
        aliases: string[];
        cpuCount: number;
        memoryMB: number;
        envdVersion: string;
      }[];
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatchObject({ cpuCount: expect.any(Number), envdVersion: expect.any(String) });
      expect((await ok(["sandbox", "snapshot", "delete", snapshotId ?? ""])).stdout).toContain(
        `Snapshot ${snapshotId} has been deleted`,
      );
      expect((await ok(["template", "list"])).stdout.trim()).toBe("No templates found.");

      expect((await ok(["sandbox", "kill", id])).stdout).toContain(`Sandbox ${id} has been killed`);
    } finally {
      await killAll(made);
    }
  });
});
