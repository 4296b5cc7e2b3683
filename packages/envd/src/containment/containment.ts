import { readFileSync, writeFileSync } from "node:fs";
import { nativeAddon } from "../native/addon.js";
import type { ProcessEnd } from "../process/managed-process.js";
import { oomKills, pidsUsage } from "./cgroup.js";
import { killSession, listPids, type ProcEntry, processTable } from "./proc-table.js";

/**
 * How envd keeps what runs in the sandbox from taking the sandbox down, set by the platform
 * per runtime (see the platform's sandbox/resource-limits.ts):
 * - runc: the kernel's OOM killer works inside the sandbox's cgroup; envd keeps out of its way
 *   (its own oom_score_adj is low, the commands' raised) and says which ends it caused.
 * - gVisor: the host's cgroup OOM killer would end the whole sandbox (it picks the sentry or a
 *   ptrace stub), so envd watches the sandbox's own memory (AnonPages tracks what the host
 *   charges) and ends the largest process before the workload passes its share; and it caps
 *   the tasks of each account (RLIMIT_NPROC, which this gVisor enforces even for root) because
 *   each guest task costs several host tasks and the host's pids limit would end the sandbox.
 * Under both, a sandbox at its process limit has the session with the most processes ended
 * (a fork bomb), as the kernel does with memory.
 */
export interface ContainmentSettings {
  /** The workload's memory, as end reasons tell it. */
  memoryLimitBytes?: number;
  /** Keep AnonPages below `memoryLimitBytes` by ending the largest process (gVisor). */
  watchMemory?: boolean;
  /** The sandbox's process limit: at 90% of it the session with the most processes is ended. */
  processLimit?: number;
  /**
   * Enforce `processLimit` per account too (gVisor): RLIMIT_NPROC of envd, inherited by
   * everything it starts. Never under runc, where the host counts an account's tasks across
   * every container.
   */
  limitAccounts?: boolean;
  /** Written to each started process's oom_score_adj (runc), envd's own being lower. */
  oomScoreAdj?: number;
}

/** What a process's end was caused by, for its end event. */
export type KillCause = "memory" | "processes";

/** What the kernel's OOM kill count was when a process started (runc). */
export interface SpawnMark {
  oomKills?: number;
}

/** Watchdog intervals: slow while memory is far from the limit, fast as it nears it. */
const MEMORY_POLL_MS = { far: 250, near: 50, close: 20 } as const;
const PROCESS_POLL_MS = 500;
/** A sandbox this close to its process limit has its largest session ended. */
const PROCESS_PRESSURE = 0.9;

type Watchdog = "memory" | "processes";

/** The workload's anonymous memory (read up to 50 times a second by the watchdog, so synchronously). */
function anonPagesBytes(): number | undefined {
  let meminfo = "";
  try {
    meminfo = readFileSync("/proc/meminfo", "utf8");
  } catch {
    // no /proc: no reading
  }
  const m = /^AnonPages:\s+(\d+) kB$/m.exec(meminfo);
  return m ? Number(m[1]) * 1024 : undefined;
}

function ownOomScoreAdj(): number {
  try {
    return Number(readFileSync("/proc/self/oom_score_adj", "utf8").trim()) || 0;
  } catch {
    return 0;
  }
}

export class Containment {
  /** Sessions (= the pid of the command that leads them) ended by a watchdog, and why. */
  private readonly causes = new Map<number, KillCause>();
  private readonly timers = new Set<NodeJS.Timeout>();
  private readonly spared: ReadonlySet<number> = new Set([1, process.pid]);
  private stopped = false;
  /** The watchdogs whose loop runs now. */
  private readonly watching = new Set<Watchdog>();
  /**
   * Nothing runs but envd and the init, so nothing can use memory or fork: the watchdogs rest
   * until envd starts a process (every process descends from one it started). A poll wakes
   * gVisor's kernel and Node's loop, ~0.75 ms of CPU each: an idle sandbox spent ~10 ms of
   * CPU a second watching, which a pool's members and a host's held sandboxes all pay.
   */
  private idle = false;
  /** Processes started so far: a poll that raced a start does not conclude the sandbox is idle. */
  private starts = 0;
  /** envd's own oom_score_adj (set by the runtime), kept below what its commands get. */
  private readonly ownOomScoreAdj = ownOomScoreAdj();

  constructor(
    readonly settings: ContainmentSettings,
    private readonly log: (
      level: "info" | "warn" | "error",
      msg: string,
      fields?: Record<string, unknown>,
    ) => void,
    /** The sandbox's processes (tests give their own: outside a sandbox /proc is the host's). */
    private readonly pids: () => Promise<number[]> = listPids,
  ) {}

  start(): void {
    const { processLimit, limitAccounts } = this.settings;
    if (processLimit && limitAccounts) nativeAddon().setProcessLimit(processLimit, processLimit);
    this.watch();
  }

  /** Whether the watchdogs rest (nothing but envd and the init runs). */
  get resting(): boolean {
    return this.idle;
  }

  private watch(): void {
    const { memoryLimitBytes, watchMemory } = this.settings;
    if (memoryLimitBytes && watchMemory)
      this.loop("memory", () => this.memoryTick(memoryLimitBytes), MEMORY_POLL_MS.far);
    this.loop("processes", () => this.processTick(), PROCESS_POLL_MS);
  }

  stop(): void {
    this.stopped = true;
    for (const t of this.timers) clearTimeout(t);
  }

  /** Read before a process starts: what its end is later compared with. */
  async beforeSpawn(): Promise<SpawnMark> {
    this.starts++;
    if (this.idle) {
      this.idle = false;
      this.watch();
    }
    return this.settings.oomScoreAdj === undefined ? {} : { oomKills: oomKills() };
  }

  /**
   * Runs a synchronous spawn so that the process is born with the commands' oom_score_adj
   * (runc): envd raises its own around the fork, which the child inherits, and lowers it back
   * (down to the floor runc set, which needs no privilege). Set after the start instead, a fork
   * bomb's first children would be born at envd's score and the OOM killer would pick envd.
   */
  spawning<T>(spawn: () => T): T {
    const adj = this.settings.oomScoreAdj;
    if (adj === undefined) return spawn();
    const own = this.ownOomScoreAdj;
    const set = (value: number) => {
      try {
        writeFileSync("/proc/self/oom_score_adj", String(value));
      } catch {
        // not writable here (outside a sandbox): the kernel's defaults apply
      }
    };
    set(adj);
    try {
      return spawn();
    } finally {
      set(own);
    }
  }

  /**
   * A process's end, with the reason when envd's watchdogs or the kernel's OOM killer caused
   * it: such an end reads as a SIGKILL death does in a shell (137), with the cause in `error`.
   */
  async explain(pid: number, end: ProcessEnd, mark: SpawnMark): Promise<ProcessEnd> {
    let cause = this.causes.get(pid);
    this.causes.delete(pid);
    const killed = end.signal === "SIGKILL" || end.exitCode === 137;
    if (!cause && killed && mark.oomKills !== undefined && (oomKills() ?? 0) > mark.oomKills) {
      cause = "memory";
    }
    if (!cause || !killed) return end;
    return { ...end, exitCode: 137, error: `${end.status}: ${this.describe(cause)}` };
  }

  private describe(cause: KillCause): string {
    const { memoryLimitBytes, processLimit } = this.settings;
    if (cause === "memory") {
      const mib = memoryLimitBytes ? ` of ${Math.round(memoryLimitBytes / 2 ** 20)} MiB` : "";
      return `out of memory: the sandbox used up its memory${mib} and its largest process was ended`;
    }
    const limit = processLimit ? ` of ${processLimit}` : "";
    return `too many processes: the sandbox reached its process limit${limit} and the session with the most processes was ended`;
  }

  /**
   * The sandbox is at its process limit (a start failed with EAGAIN, or the watchdog saw it):
   * the session with the most processes is ended. Resolves whether one was.
   */
  async relieveProcessPressure(): Promise<boolean> {
    const bySession = new Map<number, number>();
    // sessions of envd and the init are never a victim's
    for (const { sid } of await processTable(this.spared)) {
      if (!this.spared.has(sid)) bySession.set(sid, (bySession.get(sid) ?? 0) + 1);
    }
    const [sid, count] = [...bySession].sort((a, b) => b[1] - a[1])[0] ?? [];
    if (sid === undefined) return false;
    this.remember(sid, "processes");
    const killed = await killSession(sid, this.spared);
    this.log("warn", "process limit reached: ended the session with the most processes", {
      sid,
      processes: count,
      killed,
    });
    return true;
  }

  /** Runs `tick` every time it asks for, until the sandbox is idle (see `idle`) or stopped. */
  private loop(kind: Watchdog, tick: () => Promise<number>, delayMs: number): void {
    if (this.watching.has(kind)) return;
    this.watching.add(kind);
    const after = (ms: number) => {
      // decided when the next poll would be set, so a start in between is never missed
      if (this.stopped || this.idle) {
        this.watching.delete(kind);
        return;
      }
      const timer = setTimeout(() => {
        this.timers.delete(timer);
        tick().then(after, (err: unknown) => {
          this.log("error", "containment watchdog failed", { err: String(err) });
          after(delayMs);
        });
      }, ms);
      timer.unref();
      this.timers.add(timer);
    };
    after(delayMs);
  }

  /** Keeps the workload's memory below the limit by ending the largest process, as an OOM killer. */
  private async memoryTick(limit: number): Promise<number> {
    let used = anonPagesBytes();
    if (used === undefined) return MEMORY_POLL_MS.far;
    for (let kills = 0; used > limit && kills < 8; kills++) {
      const victim = (await processTable(this.spared)).sort((a, b) => b.rss - a.rss)[0];
      if (!victim) break;
      this.kill(victim, "memory");
      this.log("warn", "out of memory: ended the largest process", {
        pid: victim.pid,
        rss: victim.rss,
        used,
        limit,
      });
      await new Promise((r) => setTimeout(r, 10));
      used = anonPagesBytes() ?? 0;
    }
    if (used < limit * 0.5) return MEMORY_POLL_MS.far;
    return used < limit * 0.8 ? MEMORY_POLL_MS.near : MEMORY_POLL_MS.close;
  }

  private remember(pid: number, cause: KillCause): void {
    this.causes.set(pid, cause);
    // a victim that led no command is never asked about: keep only the recent ones
    for (const old of this.causes.keys()) {
      if (this.causes.size <= 256) break;
      this.causes.delete(old);
    }
  }

  private kill(victim: ProcEntry, cause: KillCause): void {
    this.remember(victim.pid, cause);
    // the command leading its session learns why, when it is the one that ends
    if (!this.causes.has(victim.sid)) this.remember(victim.sid, cause);
    try {
      process.kill(victim.pid, "SIGKILL");
    } catch {
      // gone already
    }
  }

  private async processTick(): Promise<number> {
    const { processLimit } = this.settings;
    const starts = this.starts;
    const pids = await this.pids();
    if (starts === this.starts && pids.every((pid) => this.spared.has(pid))) {
      this.idle = true;
      return PROCESS_POLL_MS;
    }
    const cgroup = pidsUsage();
    const atLimit = cgroup
      ? cgroup.current >= cgroup.max * PROCESS_PRESSURE
      : processLimit !== undefined && pids.length >= processLimit * PROCESS_PRESSURE;
    if (atLimit) await this.relieveProcessPressure();
    return PROCESS_POLL_MS;
  }
}
