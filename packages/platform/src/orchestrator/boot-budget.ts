import { readFile } from "node:fs/promises";
import os from "node:os";
import { unavailable } from "../model/errors.js";

export interface BootBudgetOptions {
  /** Boots at once; more only thrash the CPUs (a boot is mostly CPU). Default: cores + 1. */
  concurrent?: number;
  /** Host memory (bytes) kept available: no boot starts below it. Default: 10% of the host's. */
  memoryReserveBytes?: number;
  /** Reads the host's available memory in bytes (tests replace it). */
  availableMemory?: () => Promise<number>;
}

/** MemAvailable of /proc/meminfo (what the kernel could hand out without swapping). */
async function memAvailable(): Promise<number> {
  const text = await readFile("/proc/meminfo", "utf8").catch(() => "");
  const kb = /^MemAvailable:\s+(\d+) kB/m.exec(text)?.[1];
  return kb ? Number(kb) * 1024 : os.freemem();
}

interface Queued {
  urgent: boolean;
  start(): void;
}

/**
 * How many sandboxes boot at once, over every pool and create: a boot is mostly CPU (the
 * runtime, envd's start), so beyond about one per core they only slow each other down.
 * Boots wait their turn in arrival order, those a create waits for before those that only
 * refill a pool. A boot does not start while the host's memory is below the reserve.
 */
export class BootBudget {
  readonly concurrent: number;
  private readonly reserve: number;
  private readonly available: () => Promise<number>;
  private running = 0;
  private readonly queue: Queued[] = [];

  constructor(o: BootBudgetOptions = {}) {
    this.concurrent = Math.max(1, o.concurrent ?? os.cpus().length + 1);
    this.reserve = o.memoryReserveBytes ?? Math.round(os.totalmem() * 0.1);
    this.available = o.availableMemory ?? memAvailable;
  }

  /** Boots waiting for their turn. */
  get waiting(): number {
    return this.queue.length;
  }

  get booting(): number {
    return this.running;
  }

  /** Throws `unavailable` (503) when the host has no memory left for another sandbox. */
  async checkMemory(): Promise<void> {
    const available = await this.available();
    if (available < this.reserve) {
      const mib = (n: number) => Math.round(n / 2 ** 20);
      throw unavailable(
        `this host has ${mib(available)} MiB of memory available, below the ${mib(this.reserve)} MiB it keeps free: no new sandbox can start now; kill or pause some, or retry later`,
        10,
      );
    }
  }

  /** Runs `boot` in its turn; `urgent` (a create waits for it) goes before pool refills. */
  run<T>(boot: () => Promise<T>, opts: { urgent: boolean }): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const entry: Queued = {
        urgent: opts.urgent,
        start: () => {
          this.running++;
          this.checkMemory()
            .then(boot)
            .then(resolve, reject)
            .finally(() => {
              this.running--;
              this.next();
            });
        },
      };
      const firstRefill = this.queue.findIndex((q) => !q.urgent);
      if (opts.urgent && firstRefill >= 0) this.queue.splice(firstRefill, 0, entry);
      else this.queue.push(entry);
      this.next();
    });
  }

  private next(): void {
    while (this.running < this.concurrent && this.queue.length > 0) this.queue.shift()!.start();
  }
}
