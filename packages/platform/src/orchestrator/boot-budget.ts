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

/** A boot's turn, as the budget hands it to the boot. */
export interface BootTurn {
  /**
   * Lends the turn to the next boot while `wait` runs (a wait that uses no CPU), then waits
   * for a turn again, ahead of every boot not yet started.
   */
  aside<T>(wait: Promise<T>): Promise<T>;
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
  run<T>(boot: (turn: BootTurn) => Promise<T>, opts: { urgent: boolean }): Promise<T> {
    const turn: BootTurn = { aside: (wait) => this.aside(wait) };
    return new Promise<T>((resolve, reject) => {
      const entry: Queued = {
        urgent: opts.urgent,
        start: () => {
          this.running++;
          this.checkMemory()
            .then(() => boot(turn))
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

  private async aside<T>(wait: Promise<T>): Promise<T> {
    this.running--;
    this.next();
    try {
      return await wait;
    } finally {
      await new Promise<void>((back) => {
        this.queue.unshift({
          urgent: true,
          start: () => {
            this.running++;
            back();
          },
        });
        this.next();
      });
    }
  }

  private next(): void {
    while (this.running < this.concurrent && this.queue.length > 0) this.queue.shift()!.start();
  }
}
