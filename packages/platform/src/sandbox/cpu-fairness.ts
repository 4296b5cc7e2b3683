import type { Logger } from "../lib/log.js";
import { cgroupCpuUsageNs, setCgroupLimits } from "../runtime/cgroup-limits.js";
import { containerCgroup } from "../runtime/oci-spec.js";

/** cpu.shares of a sandbox (v1 scale; v2 weights are converted): the kernel's default. */
export const NORMAL_SHARES = 1024;
/**
 * cpu.shares of a warm pool member booted for stock, until it is handed out: its boot (under
 * gVisor, seconds of CPU) takes only what the sandboxes in use leave, so a refill started by a
 * create does not slow that create's first commands.
 */
export const STOCK_SHARES = 32;
/** cpu.shares of a sandbox that keeps a core busy: its neighbours' wake-ups go first. */
export const BUSY_SHARES = 128;
/** Cores used on average over the window, at or above which a sandbox counts as busy … */
const BUSY_CORES = 1;
/** … and below which it is back to normal. */
const CALM_CORES = 0.5;
/** Samples in the window, one per interval. */
const WINDOW = 3;

export interface CpuFairnessOptions {
  /** The sandboxes to look at: the running ones. */
  ids(): Iterable<string>;
  log: Logger;
  intervalMs?: number;
  cgroupRoot?: string;
}

interface Tracked {
  /** CPU used and when, oldest first, over the window. */
  samples: Array<{ usedNs: number; atMs: number }>;
  busy: boolean;
}

/**
 * Keeps a sandbox that spins from slowing its neighbours. Each sandbox's quota already caps it
 * at its own cores; with several sandboxes on the same cores, the kernel shares them by weight,
 * and equal weights let a spinning sandbox delay a neighbour's short commands (a `true` waits
 * behind its time slices). A sandbox that used a core or more over the last seconds gets an
 * eighth of the normal weight, as a batch job would: it still takes every idle cycle, while an
 * interactive neighbour's wake-ups go first. Back to normal once it is calm again.
 */
export class CpuFairness {
  private readonly tracked = new Map<string, Tracked>();
  private timer: NodeJS.Timeout | undefined;
  private ticking = false;

  constructor(private readonly o: CpuFairnessOptions) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), this.o.intervalMs ?? 1_000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Sandboxes weighted down now (for metrics and tests). */
  busy(): string[] {
    return [...this.tracked].filter(([, t]) => t.busy).map(([id]) => id);
  }

  async tick(): Promise<void> {
    if (this.ticking) return;
    this.ticking = true;
    try {
      const ids = new Set(this.o.ids());
      for (const id of this.tracked.keys()) if (!ids.has(id)) this.tracked.delete(id);
      for (const id of ids) await this.look(id);
    } catch (err) {
      this.o.log.error({ err }, "CPU fairness check failed");
    } finally {
      this.ticking = false;
    }
  }

  private async look(id: string): Promise<void> {
    const cgroup = containerCgroup({ id });
    const usedNs = await cgroupCpuUsageNs(cgroup, this.o.cgroupRoot);
    if (usedNs === undefined) return;
    let t = this.tracked.get(id);
    if (!t) {
      t = { samples: [], busy: false };
      this.tracked.set(id, t);
    }
    const first = t.samples[0];
    // a cgroup made again (a sandbox booted afresh) counts from zero
    if (first && usedNs < first.usedNs) t.samples = [];
    t.samples.push({ usedNs, atMs: Date.now() });
    if (t.samples.length > WINDOW + 1) t.samples.shift();
    if (t.samples.length < WINDOW + 1) return;
    const oldest = t.samples[0]!;
    const cores = (usedNs - oldest.usedNs) / ((Date.now() - oldest.atMs) * 1e6);
    const busy = t.busy ? cores >= CALM_CORES : cores >= BUSY_CORES;
    if (busy === t.busy) return;
    try {
      await setCgroupLimits(cgroup, { cpuShares: busy ? BUSY_SHARES : NORMAL_SHARES }, this.o.cgroupRoot);
    } catch (err) {
      // gone meanwhile, or no cpu controller here: tried again next time
      this.o.log.debug({ sandboxId: id, err }, "could not reweigh a sandbox's CPU");
      return;
    }
    t.busy = busy;
    this.o.log.debug(
      { sandboxId: id, cores: Math.round(cores * 100) / 100 },
      busy ? "sandbox busy: weighted down" : "sandbox calm: weight restored",
    );
  }
}
