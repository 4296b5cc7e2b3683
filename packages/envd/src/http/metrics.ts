import { readFile, statfs } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import type { EnvdComponents } from "@x/envd-client";

export type Metrics = EnvdComponents["schemas"]["Metrics"];

const MIB = 1024 * 1024;
/** Shorter intervals than this give noisy CPU percentages; the first call waits this long. */
const MIN_CPU_WINDOW_MS = 100;

async function readText(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch(() => undefined);
}

/** `key value` lines (memory.stat, cpu.stat, /proc/meminfo with its `kB` suffix and colon). */
function parseKeyValues(text: string): Map<string, number> {
  const values = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [key, value] = line.replace(":", "").trim().split(/\s+/);
    if (key && value !== undefined && /^\d+$/.test(value)) values.set(key, Number(value));
  }
  return values;
}

/** This process's cgroup v2 directory: inside a sandbox, the sandbox's own accounting. */
async function cgroupDir(): Promise<string | undefined> {
  const line = (await readText("/proc/self/cgroup"))?.split("\n").find((l) => l.startsWith("0::"));
  return line ? path.join("/sys/fs/cgroup", line.slice(3)) : undefined;
}

interface CpuSample {
  atMs: number;
  /** CPU time used (all cores) in microseconds, by the cgroup or the whole system. */
  busyUs: number;
}

async function sampleCpu(cgroup: string | undefined): Promise<CpuSample> {
  const atMs = performance.now();
  const cpuStat = cgroup ? await readText(path.join(cgroup, "cpu.stat")) : undefined;
  const usage = cpuStat ? parseKeyValues(cpuStat).get("usage_usec") : undefined;
  if (usage !== undefined) return { atMs, busyUs: usage };
  // /proc/stat "cpu user nice system idle iowait irq softirq steal ..." in clock ticks (USER_HZ=100).
  const fields =
    ((await readText("/proc/stat")) ?? "").split("\n")[0]?.trim().split(/\s+/).slice(1).map(Number) ?? [];
  const idle = (fields[3] ?? 0) + (fields[4] ?? 0);
  const total = fields.slice(0, 8).reduce((a, b) => a + b, 0);
  return { atMs, busyUs: (total - idle) * 10_000 };
}

async function cpuCount(cgroup: string | undefined): Promise<number> {
  const cpus = os.availableParallelism();
  const max = cgroup ? (await readText(path.join(cgroup, "cpu.max")))?.trim().split(/\s+/) : undefined;
  const quota = Number(max?.[0]);
  const period = Number(max?.[1]);
  return quota > 0 && period > 0 ? Math.max(1, Math.min(cpus, Math.ceil(quota / period))) : cpus;
}

interface Memory {
  total: number;
  used: number;
  cache: number;
}

/** cgroup numbers when the cgroup accounts memory (a sandbox), else the machine's. */
async function memory(cgroup: string | undefined): Promise<Memory> {
  const meminfo = parseKeyValues((await readText("/proc/meminfo")) ?? "");
  const machineTotal = (meminfo.get("MemTotal") ?? 0) * 1024;
  const current = cgroup ? Number((await readText(path.join(cgroup, "memory.current")))?.trim()) : Number.NaN;
  if (cgroup && Number.isFinite(current)) {
    const limit = Number((await readText(path.join(cgroup, "memory.max")))?.trim());
    const stat = parseKeyValues((await readText(path.join(cgroup, "memory.stat"))) ?? "");
    // Reclaimable page cache is not "used", as in `docker stats`.
    const used = Math.max(0, current - (stat.get("inactive_file") ?? 0));
    const total = Number.isFinite(limit) && limit > 0 ? Math.min(limit, machineTotal || limit) : machineTotal;
    return { total, used: Math.min(used, total), cache: stat.get("file") ?? 0 };
  }
  const available = (meminfo.get("MemAvailable") ?? meminfo.get("MemFree") ?? 0) * 1024;
  return { total: machineTotal, used: machineTotal - available, cache: (meminfo.get("Cached") ?? 0) * 1024 };
}

async function disk(): Promise<{ total: number; used: number }> {
  const st = await statfs("/");
  return { total: st.blocks * st.bsize, used: (st.blocks - st.bfree) * st.bsize };
}

/**
 * Samples resource usage for `GET /metrics`. CPU percent is over the time since the
 * previous call (the platform polls), or over a short window on the first call.
 */
export function createMetricsSampler(): () => Promise<Metrics> {
  let previous: CpuSample | undefined;
  return async () => {
    const cgroup = await cgroupDir();
    let before = previous;
    if (!before || performance.now() - before.atMs < MIN_CPU_WINDOW_MS) {
      before = await sampleCpu(cgroup);
      await new Promise((resolve) => setTimeout(resolve, MIN_CPU_WINDOW_MS));
    }
    const [now, cpus, mem, fs] = await Promise.all([
      sampleCpu(cgroup),
      cpuCount(cgroup),
      memory(cgroup),
      disk(),
    ]);
    previous = now;
    const wallUs = (now.atMs - before.atMs) * 1000;
    const pct = wallUs > 0 ? ((now.busyUs - before.busyUs) / (wallUs * cpus)) * 100 : 0;
    return {
      ts: Math.floor(Date.now() / 1000),
      cpu_count: cpus,
      cpu_used_pct: Math.round(Math.min(100, Math.max(0, pct)) * 100) / 100,
      mem_total: mem.total,
      mem_used: mem.used,
      mem_cache: mem.cache,
      mem_total_mib: Math.floor(mem.total / MIB),
      mem_used_mib: Math.floor(mem.used / MIB),
      disk_total: fs.total,
      disk_used: fs.used,
    };
  };
}
