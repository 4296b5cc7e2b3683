import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { silentLogger } from "../lib/log.js";
import type { Sandbox } from "../model/sandbox.js";
import type { Store } from "../store/index.js";
import { MetricsSampler } from "./metrics-sampler.js";

const MIB = 1024 * 1024;

function write(file: string, content: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, content);
}

describe("MetricsSampler", () => {
  let dir: string;
  let rows: Sandbox[];
  let sampler: MetricsSampler;
  const cgroupRoot = () => path.join(dir, "cgroup");
  const setCpu = (id: string, ns: number) =>
    write(path.join(cgroupRoot(), "cpuacct/x", id, "cpuacct.usage"), `${ns}\n`);

  function addSandbox(id: string, state: Sandbox["state"] = "running"): Sandbox {
    const row = {
      id,
      state,
      cpuCount: 2,
      memoryMB: 512,
      diskSizeMB: 1024,
      startedAt: new Date(Date.now() - 10_000).toISOString(),
    } as Sandbox;
    rows.push(row);
    write(
      path.join(dir, "sandboxes", id, "bundle", "config.json"),
      JSON.stringify({ linux: { cgroupsPath: `/x/${id}` } }),
    );
    write(path.join(dir, "sandboxes", id, "upper", "home", "file"), "x".repeat(10_000));
    const memory = path.join(cgroupRoot(), "memory/x", id);
    write(path.join(memory, "memory.usage_in_bytes"), `${20 * MIB}\n`);
    write(path.join(memory, "memory.limit_in_bytes"), `${512 * MIB}\n`);
    write(path.join(memory, "memory.stat"), `total_cache ${4 * MIB}\ntotal_inactive_file ${MIB}\n`);
    setCpu(id, 0);
    return row;
  }

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-sampler-"));
    rows = [];
    const store = {
      sandboxes: { live: async () => rows.filter((r) => r.state !== "killed") },
    } as unknown as Store;
    sampler = new MetricsSampler({
      store,
      paths: (id) => ({
        bundle: path.join(dir, "sandboxes", id, "bundle"),
        upper: path.join(dir, "sandboxes", id, "upper"),
      }),
      capacity: 3,
      cgroupRoot: cgroupRoot(),
      log: silentLogger,
    });
  });

  afterEach(async () => {
    await sampler.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("samples running sandboxes into a bounded ring, with CPU use between samples", async () => {
    const row = addSandbox("a");
    addSandbox("p", "paused");
    await sampler.tick();
    const [first] = sampler.history("a");
    expect(first).toEqual({
      timestamp: expect.any(String),
      timestampUnix: expect.any(Number),
      cpuCount: 2,
      cpuUsedPct: 0,
      memUsed: 19 * MIB,
      memTotal: 512 * MIB,
      memCache: 4 * MIB,
      diskUsed: expect.any(Number),
      diskTotal: 1024 * MIB,
    });
    expect(first!.diskUsed).toBeGreaterThanOrEqual(10_000);
    expect(sampler.history("p")).toEqual([]);

    // one CPU busy for the whole interval of two: 50 %
    const before = Date.now();
    await new Promise((r) => setTimeout(r, 200));
    setCpu("a", (Date.now() - before) * 1e6);
    await sampler.tick();
    expect(sampler.history("a")[1]!.cpuUsedPct).toBeGreaterThan(35);
    expect(sampler.history("a")[1]!.cpuUsedPct).toBeLessThanOrEqual(50);

    await sampler.tick();
    await sampler.tick();
    expect(sampler.history("a")).toHaveLength(3);
    expect(await sampler.latest(row)).toBe(sampler.history("a")[2]);
    const now = Math.floor(Date.now() / 1000);
    expect(sampler.history("a", { start: now + 10 })).toEqual([]);
    expect(sampler.history("a", { end: now + 10 })).toHaveLength(3);
  });

  it("samples a new sandbox on demand, keeps a paused one's history and forgets killed ones", async () => {
    const row = addSandbox("b");
    const latest = await sampler.latest(row);
    expect(latest?.memUsed).toBe(19 * MIB);
    expect(sampler.history("b")).toHaveLength(1);
    row.state = "paused";
    await sampler.tick();
    expect(sampler.history("b")).toHaveLength(1);
    expect(await sampler.latest({ ...row, id: "unknown", state: "paused" })).toBeUndefined();
    row.state = "killed";
    await sampler.tick();
    expect(sampler.history("b")).toEqual([]);
  });

  it("skips sandboxes whose container is gone", async () => {
    const row = addSandbox("c");
    rmSync(path.join(cgroupRoot(), "memory/x/c"), { recursive: true });
    await sampler.tick();
    expect(sampler.history("c")).toEqual([]);
    expect(await sampler.latest(row)).toBeUndefined();
  });
});
