import type { KeyedLock } from "../lib/keyed-lock.js";
import type { Logger } from "../lib/log.js";
import type { RuntimeName } from "../model/sandbox.js";
import type { SandboxHostPort } from "../sandbox/host-port.js";
import type { Store } from "../store/index.js";
import type { BootBudget } from "./boot-budget.js";
import type { LiveSandboxes } from "./live.js";
import type { WarmPool } from "./warm-pool.js";

export interface OrchestratorOptions {
  store: Store;
  /** Sandboxes on this host: `SandboxHost`, or a fake in unit tests. */
  host: SandboxHostPort;
  dataDir: string;
  defaultRuntime: RuntimeName;
  /** A frozen sandbox older than this is checkpointed (or stopped) to free its memory. */
  deepPauseAfterMs: number;
  log: Logger;
  /** Where creates get their sandboxes: ready ones, or booted for them (see WarmPool). */
  pool: WarmPool;
  /** How many boots may run at once (shared with the pool). */
  budget: BootBudget;
  /** A team's starting and running sandboxes at most: resumes count against it as creates do. */
  maxLivePerTeam?: number;
  /** Called when a sandbox stops serving (kill, pause), to cut its open connections. */
  onUnavailable?(sandboxId: string): void;
}

/** What the orchestrator's parts share: its options, the live side of sandboxes and the locks. */
export interface OrchestratorContext extends OrchestratorOptions {
  live: LiveSandboxes;
  /** One operation at a time per sandbox (create, pause, resume, kill, snapshot). */
  lock: KeyedLock;
  /** Arms the end-of-life timer of a sandbox (after create, resume or a new timeout). */
  armDeadline(sandbox: { id: string; endAt: string }): void;
  /** Arms the timer that deepens a frozen pause. */
  armDeepPause(id: string): void;
}
