/**
 * Probes of the security review (2026-12-07) for output the host takes from sandboxes and
 * builds: H2 (a sandbox's root floods its console log, a host file) and H3 (a build's output
 * buffered and stored whole). Through the public e2b client and the raw API against a real
 * platform in this process, as a tenant would; each failed on 90dd82b.
 */
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { createEnvdClient } from "@x/envd-client";
import { Sandbox, Template } from "e2b";
import { DEFAULT_CONSOLE_LOG_MAX_BYTES } from "../../src/sandbox/console-log.js";
import { DEFAULT_BUILD_LOG_LIMITS } from "../../src/templates/build-log.js";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";
import { startTemplatePlatform, type TemplatePlatform } from "../templates/support.js";

const MiB = 2 ** 20;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The largest value `read` gave while `during` ran, sampled every 20 ms. */
async function largestWhile<T>(
  read: () => number,
  during: Promise<T>,
): Promise<{ largest: number; result: T }> {
  let largest = read();
  const timer = setInterval(() => {
    largest = Math.max(largest, read());
  }, 20);
  try {
    const result = await during;
    return { largest: Math.max(largest, read()), result };
  } finally {
    clearInterval(timer);
  }
}

/** Starts `true` with this tag through envd's own API, as any client may, and waits for its end. */
async function startTagged(t: TestPlatform, sandbox: Sandbox, tag: string): Promise<void> {
  const row = await t.platform.store.sandboxes.get(sandbox.sandboxId);
  const envd = createEnvdClient({
    baseUrl: t.proxyUrl,
    sandboxId: sandbox.sandboxId,
    accessToken: row!.envdAccessToken,
  });
  const auth = { Authorization: `Basic ${Buffer.from("user:").toString("base64")}` };
  const stream = envd.process.start(
    { process: { cmd: "/bin/true", args: [], envs: {} }, tag, stdin: false },
    { headers: auth },
  );
  for await (const _ of stream) {
    // to its end
  }
}

async function logsWith(t: TestPlatform, id: string, search: string, query = "") {
  const res = await fetch(
    `${t.apiUrl}/v2/sandboxes/${id}/logs?search=${encodeURIComponent(search)}${query}`,
    {
      headers: { "X-API-Key": t.apiKey },
    },
  );
  expect(res.status).toBe(200);
  return ((await res.json()) as { logs: Array<{ message: string; fields: Record<string, string> }> }).logs;
}

describe.each(["runc", "runsc"] as const)("a console log flooded by a sandbox's root on %s", (runtime) => {
  // the sandbox's own disk: a flood never outgrows it, whatever the platform does meanwhile
  const DISK_MB = 256;
  let t: TestPlatform;
  let restoreEnv = () => {};
  const sandboxes: Sandbox[] = [];

  beforeAll(async () => {
    t = await startTestPlatform({ runtime, config: { diskSizeMB: DISK_MB } });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    await Promise.all(sandboxes.map((s) => s.kill().catch(() => undefined)));
    restoreEnv();
    await t?.stop();
  });

  it("stays small on the host, on the sandbox's own disk, and the logs API still reads it", async () => {
    const sandbox = await Sandbox.create({ timeoutMs: 300_000 });
    sandboxes.push(sandbox);
    const consoleFile = path.join(TEST_DATA_DIR, "sandboxes", sandbox.sandboxId, "disk", "console.log");
    const size = () => {
      try {
        return statSync(consoleFile).size;
      } catch {
        return 0;
      }
    };
    expect(size()).toBeGreaterThan(0); // envd's own lines are there

    const { largest } = await largestWhile(size, flood(sandbox));
    // settled: the platform trims a log once it holds twice its cap
    const bound = 2 * DEFAULT_CONSOLE_LOG_MAX_BYTES + MiB;
    for (const deadline = Date.now() + 30_000; size() > bound && Date.now() < deadline; ) await sleep(50);
    const settled = size();
    process.stderr.write(
      `${runtime}: console flooded: largest log seen ${(largest / MiB).toFixed(1)} MiB, then ${(settled / MiB).toFixed(1)} MiB\n`,
    );
    expect(largest).toBeLessThanOrEqual(DISK_MB * MiB);
    expect(settled).toBeLessThanOrEqual(bound);

    if (runtime === "runsc") {
      // what the sandbox's root writes there goes, through the sentry, into that host file
      const marker = `console-marker-${randomBytes(6).toString("hex")}`;
      await sandbox.commands.run(`echo ${marker} >> /proc/1/fd/1`, { user: "root" });
      expect(readFileSync(consoleFile, "utf8")).toContain(marker);
      expect(await logsWith(t, sandbox.sandboxId, marker)).toEqual([
        expect.objectContaining({ message: marker, fields: { source: "console" } }),
      ]);
    }
    // envd's own lines are read back too, each of its fields at most 1 KiB
    const tag = `tag-marker-${randomBytes(6).toString("hex")}`;
    await startTagged(t, sandbox, tag);
    const [newest] = await logsWith(t, sandbox.sandboxId, "process started", "&direction=backward&limit=1");
    expect(newest).toMatchObject({ message: "process started", fields: { tag, source: "envd" } });
    // and the sandbox works on, its disk its own again
    expect((await sandbox.commands.run("echo still here")).stdout).toBe("still here\n");
  });

  /**
   * Two ways into the console: its root writing 512 MiB to /proc/1/fd/1 (refused under runc,
   * whose root is not the host's; written through the sentry under gVisor), and any client
   * starting processes whose tags envd logs (64 of 1 MiB).
   */
  async function flood(sandbox: Sandbox): Promise<void> {
    await sandbox.commands.run("head -c 512M /dev/zero >> /proc/1/fd/1 || true", {
      user: "root",
      timeoutMs: 240_000,
    });
    for (let i = 0; i < 64; i++) await startTagged(t, sandbox, `${"t".repeat(MiB)}${i}`);
  }
});

describe("the console of a stopped sandbox", () => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    // a paused runc sandbox is stopped (its disk unmounted) after this
    t = await startTestPlatform({ runtime: "runc", config: { deepPauseAfterMs: 1_000 } });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    await sandbox?.kill().catch(() => undefined);
    restoreEnv();
    await t?.stop();
  });

  it("stays readable through the logs API, and goes on after the sandbox's next start", async () => {
    sandbox = await Sandbox.create({ timeoutMs: 300_000 });
    const id = sandbox.sandboxId;
    const before = `before-${randomBytes(6).toString("hex")}`;
    await startTagged(t, sandbox, before);
    await sandbox.pause();
    for (const deadline = Date.now() + 60_000; Date.now() < deadline; await sleep(100)) {
      if ((await t.platform.store.sandboxes.get(id))?.pauseKind === "stopped") break;
    }
    expect((await t.platform.store.sandboxes.get(id))?.pauseKind).toBe("stopped");
    const dir = path.join(TEST_DATA_DIR, "sandboxes", id);
    // its disk is unmounted: what the console held is on the data dir now
    expect(existsSync(path.join(dir, "disk", "console.log"))).toBe(false);
    expect(readFileSync(path.join(dir, "console.log"), "utf8")).toContain(before);
    const tags = async () =>
      (await logsWith(t, id, "process started", "&limit=1000")).map((e) => e.fields.tag).filter(Boolean);
    expect(await tags()).toEqual([before]);

    const again = await Sandbox.connect(id);
    const after = `after-${randomBytes(6).toString("hex")}`;
    await startTagged(t, again, after);
    expect(await tags()).toEqual([before, after]);
  });
});

describe("output of template builds", () => {
  let p: TemplatePlatform;

  beforeAll(async () => {
    p = await startTemplatePlatform("runc");
    p.useClient();
  });

  afterAll(async () => {
    await p?.stop();
  });

  const logs = (buildId: string) => p.t.platform.store.templates.logs(buildId, 0, 10_000_000);

  it("never gathers a step's output whole: the platform's memory stays flat", async () => {
    const template = Template().fromTemplate("base").runCmd("head -c 1500M /dev/zero", { user: "root" });
    const before = process.memoryUsage().rss;
    const { largest, result: build } = await largestWhile(
      () => process.memoryUsage().rss,
      Template.build(template, `zeros-${randomBytes(4).toString("hex")}`),
    );
    process.stderr.write(
      `1500 MiB of output without a newline: RSS +${((largest - before) / MiB).toFixed(0)} MiB\n`,
    );
    expect(largest - before).toBeLessThan(300 * MiB);
    const rows = await logs(build.buildId);
    // one line, cut where the host stops reading it; the build went on to its own result
    const cut = rows.filter((r) => r.message.endsWith("[line cut at 64 KiB]"));
    expect(cut.length).toBe(1);
    expect(rows.reduce((n, r) => n + r.message.length, 0)).toBeLessThan(MiB);
    expect(rows.at(-1)?.message).toMatch(/^Build finished in/);
  });

  it("keeps at most its cap of output rows, says it truncated, and the build succeeds", async () => {
    const template = Template().fromTemplate("base").runCmd("yes | head -n 5000000");
    const build = await Template.build(template, `yes-${randomBytes(4).toString("hex")}`);
    const rows = await logs(build.buildId);
    const output = rows.filter((r) => r.message === "y");
    expect(output.length).toBeLessThanOrEqual(DEFAULT_BUILD_LOG_LIMITS.maxLines);
    expect(rows.length).toBeLessThanOrEqual(DEFAULT_BUILD_LOG_LIMITS.maxLines + 10);
    expect(rows.filter((r) => r.message.startsWith("output truncated: ")).length).toBe(1);
    expect(rows.at(-1)?.message).toMatch(/^Build finished in/);
    const status = await p.api("GET", `/templates/${build.templateId}/builds/${build.buildId}/status`);
    expect(status.body.status).toBe("ready");
  });
});
