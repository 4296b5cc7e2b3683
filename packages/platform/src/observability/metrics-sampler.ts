import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Schemas } from "@x/platform-client";
import type { Logger } from "../lib/log.js";
import type { Sandbox } from "../model/sandbox.js";
import type { Store } from "../store/index.js";
import { readCgroupStats } from "./cgroup-stats.js";
import { diskUsage } from "./disk-usage.js";

/** One resource-usage sample of a sandbox: the `SandboxMetric` of openapi.yaml. */
export type SandboxMetric = Schemas["SandboxMetric"];

export interface MetricsSamplerOptions {
  store: Store;
  /** Where a sandbox's OCI bundle and writable layer are. */
  paths(id: string): { bundle: string; upper: string };
  /** Sampling period; default 5 s. */
  intervalMs?: number;
  /** Samples kept per sandbox; default 720 (an hour at 5 s). */
  capacity?: number;
  /** The writable layer is walked at most this often (it can hold many files); default 30 s. */
  diskIntervalMs?: number;
  /** Root of the cgroup filesystem; default /sys/fs/cgroup. */
  cgroupRoot?: string;
  log: Logger;
}

interface Tracked {
  cgroup: string;
  samples: SandboxMetric[];
  last?: { cpuUsageNs: number; atMs: number };
  disk?: { bytes: number; atMs: number };
}

const MIB = 1024 * 1024;

/**
 * Samples the cgroup and writable layer of every running sandbox on a timer into a bounded
 * ring per sandbox, so metric history is served from memory. Which sandboxes run is read from
 * the store on each tick; a killed sandbox's ring is dropped, a paused one's is kept.
 */
export class MetricsSampler {
  private readonly tracked = new Map<string, Tracked>();
  private readonly intervalMs: number;
  private readonly capacity: number;
  private readonly diskIntervalMs: number;
  private timer?: NodeJS.Timeout;
  private ticking?: Promise<void>;

  constructor(private readonly o: MetricsSamplerOptions) {
    this.intervalMs = o.intervalMs ?? 5000;
    this.capacity = o.capacity ?? 720;
    this.diskIntervalMs = o.diskIntervalMs ?? 30_000;
  }

  start(): void {
    this.timer ??= setInterval(() => void this.tick(), this.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
  }

  /** One sampling round over all running sandboxes; overlapping calls share the round. */
  tick(): Promise<void> {
    this.ticking ??= this.round().finally(() => {
      this.ticking = undefined;
    });
    return this.ticking;
  }

  private async round(): Promise<void> {
    let rows: Sandbox[];
    try {
      rows = await this.o.store.sandboxes.live();
    } catch (err) {
      this.o.log.warn({ err }, "metrics sampling: cannot list sandboxes");
      return;
    }
    const live = new Set(rows.map((r) => r.id));
    for (const id of this.tracked.keys()) if (!live.has(id)) this.tracked.delete(id);
    for (const row of rows) {
      if (row.state !== "running") continue;
      await this.sample(row).catch((err) =>
        this.o.log.warn({ sandboxId: row.id, err }, "metrics sampling failed"),
      );
    }
  }

  /** Samples in the interval (Unix seconds, inclusive), oldest first. */
  history(id: string, range: { start?: number; end?: number } = {}): SandboxMetric[] {
    const samples = this.tracked.get(id)?.samples ?? [];
    return samples.filter(
      (s) =>
        (range.start === undefined || s.timestampUnix >= range.start) &&
        (range.end === undefined || s.timestampUnix <= range.end),
    );
  }

  /**
   * The newest sample; a running sandbox not sampled yet (just created) is sampled now, so
   * metrics exist from a sandbox's first moments.
   */
  async latest(row: Sandbox): Promise<SandboxMetric | undefined> {
    const samples = this.tracked.get(row.id)?.samples;
    if (samples?.length) return samples.at(-1);
    return row.state === "running" ? this.sample(row) : undefined;
  }

  private async track(row: Sandbox): Promise<Tracked> {
    const existing = this.tracked.get(row.id);
    if (existing) return existing;
    // the cgroup is whatever the sandbox's OCI spec asked the runtime for
    const spec = JSON.parse(
      await readFile(path.join(this.o.paths(row.id).bundle, "config.json"), "utf8"),
    ) as {
      linux?: { cgroupsPath?: string };
    };
    const cgroup = spec.linux?.cgroupsPath;
    if (!cgroup) throw new Error(`sandbox ${row.id} has no cgroupsPath in its OCI spec`);
    const tracked: Tracked = { cgroup, samples: [] };
    this.tracked.set(row.id, tracked);
    return tracked;
  }

  private async sample(row: Sandbox): Promise<SandboxMetric | undefined> {
    let tracked: Tracked;
    try {
      tracked = await this.track(row);
    } catch (err) {
      // no bundle: the sandbox is being created or was just removed
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
      throw err;
    }
    const stats = await readCgroupStats(tracked.cgroup, this.o.cgroupRoot);
    if (!stats) return undefined;
    const nowMs = Date.now();
    if (!tracked.disk || nowMs - tracked.disk.atMs >= this.diskIntervalMs) {
      tracked.disk = { bytes: await diskUsage(this.o.paths(row.id).upper), atMs: nowMs };
    }
    // the first sample averages over the sandbox's life so far
    const previous = tracked.last ?? { cpuUsageNs: 0, atMs: Date.parse(row.startedAt) };
    const wallNs = Math.max(1, nowMs - previous.atMs) * 1e6;
    // a sandbox booted again (resumed from stopped) has a new cgroup counting from zero
    const usedNs = stats.cpuUsageNs - (stats.cpuUsageNs >= previous.cpuUsageNs ? previous.cpuUsageNs : 0);
    const pct = (usedNs / (wallNs * row.cpuCount)) * 100;
    tracked.last = { cpuUsageNs: stats.cpuUsageNs, atMs: nowMs };
    const configuredMem = row.memoryMB * MIB;
    const metric: SandboxMetric = {
      timestamp: new Date(nowMs).toISOString(),
      timestampUnix: Math.floor(nowMs / 1000),
      cpuCount: row.cpuCount,
      cpuUsedPct: Math.round(Math.min(100, Math.max(0, pct)) * 100) / 100,
      memUsed: stats.memUsed,
      memTotal: Math.min(stats.memLimit ?? configuredMem, configuredMem),
      memCache: stats.memCache,
      diskUsed: tracked.disk.bytes,
      diskTotal: row.diskSizeMB * MIB,
    };
    tracked.samples.push(metric);
    if (tracked.samples.length > this.capacity) {
      tracked.samples.splice(0, tracked.samples.length - this.capacity);
    }
    return metric;
  }
}
