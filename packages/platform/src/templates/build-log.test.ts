import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { openStore, type Store } from "../store/index.js";
import { BuildLog, buildLogLimits, DEFAULT_BUILD_LOG_LIMITS } from "./build-log.js";

describe("a build's log", () => {
  let dir: string;
  let store: Store;

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-build-log-"));
    store = await openStore({ dataDir: dir });
  });

  afterAll(async () => {
    await store?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  async function newBuild(): Promise<string> {
    const team = await store.teams.createTeam("T", `t-${Math.random().toString(36).slice(2, 8)}`);
    const template = await store.templates.createTemplate(team.id);
    const build = await store.templates.createBuild({
      templateId: template.id,
      status: "building",
      cpuCount: 1,
      memoryMB: 512,
      diskSizeMB: 1024,
      envdVersion: "0",
      spec: {},
      layers: [],
    });
    return build.id;
  }

  const rows = (buildId: string) => store.templates.logs(buildId, 0, 1_000_000);

  it("keeps at most its line limit of output, says so once, and keeps the platform's own lines", async () => {
    const buildId = await newBuild();
    const errors: unknown[] = [];
    const log = new BuildLog(store, buildId, (err) => errors.push(err), {
      maxLines: 1000,
      maxBytes: 2 ** 20,
    });
    log.info("[1/1] RUN yes | head -n 5000000", "1");
    // what one output message of `yes` holds, many times over
    for (let i = 0; i < 5_000; i++) log.output("y", "1");
    log.write("error", "Build failed: exit code 1", "1");
    await log.flush();
    expect(errors).toEqual([]);
    const all = await rows(buildId);
    expect(all.length).toBe(1 + 1000 + 1 + 1);
    expect(all[0]!.message).toBe("[1/1] RUN yes | head -n 5000000");
    expect(all.filter((r) => r.message === "y").length).toBe(1000);
    expect(all[1001]).toMatchObject({
      level: "warn",
      step: "1",
      message: "output truncated: this build's log keeps 1000 lines or 1 MiB of output, the rest is left out",
    });
    expect(all[1002]!.message).toBe("Build failed: exit code 1");
  });

  it("keeps at most its byte limit of output", async () => {
    const buildId = await newBuild();
    const log = new BuildLog(store, buildId, () => undefined, { maxLines: 1_000_000, maxBytes: 256 * 1024 });
    const line = "z".repeat(64 * 1024);
    for (let i = 0; i < 100; i++) log.output(line, "1");
    await log.flush();
    const all = await rows(buildId);
    expect(all.filter((r) => r.message === line).length).toBe(4);
    expect(all.at(-1)!.message).toMatch(/^output truncated: .* 256 KiB of output/);
    expect(all.length).toBe(5);
  });

  it("stores NULs, over-long messages and bursts larger than one insert", async () => {
    const buildId = await newBuild();
    const log = new BuildLog(store, buildId, () => undefined);
    log.output("\0\0\0", "1");
    log.info("x".repeat(100_000), "1");
    // one message of output can hold thousands of lines: written in inserts of a bounded size
    for (let i = 0; i < 40_000; i++) log.output(String(i), "2");
    await log.flush();
    const all = await rows(buildId);
    expect(all[0]!.message).toBe("\uFFFD\uFFFD\uFFFD");
    expect(Buffer.byteLength(all[1]!.message)).toBeLessThan(66 * 1024);
    expect(all[1]!.message).toMatch(/ \[cut at 65 KiB\]$/);
    expect(all.length).toBe(40_002);
    expect(all.at(-1)!.message).toBe("39999");
  });

  it("takes its limits from the platform's settings", () => {
    expect(buildLogLimits({})).toEqual(DEFAULT_BUILD_LOG_LIMITS);
    expect(buildLogLimits({ buildLogMaxLines: 10, buildLogMaxMB: 2 })).toEqual({
      maxLines: 10,
      maxBytes: 2 * 2 ** 20,
    });
  });
});
