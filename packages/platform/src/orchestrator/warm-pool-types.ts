import type { Logger } from "../lib/log.js";
import type { RuntimeName } from "../model/sandbox.js";
import type { SandboxHostPort } from "../sandbox/host-port.js";
import type { BootSpec } from "../sandbox/sandbox-host.js";
import type { BootBudget } from "./boot-budget.js";

/** A booted sandbox nobody owns yet: envd answers with the pool's own token. */
export interface PoolMember {
  id: string;
  runtime: RuntimeName;
  buildId: string;
  address: string;
  /** The token envd was started with; the claim replaces it through /init. */
  accessToken: string;
  /** Whether it was ready when taken (a hit), rather than booted while its create waited. */
  fromStock: boolean;
}

export interface PoolLimits {
  /** Ready members kept at least (the pool never shrinks below). */
  min: number;
  /** Ready members kept at most, however high demand goes. */
  max: number;
}

export interface WarmPoolOptions extends PoolLimits {
  host: SandboxHostPort;
  budget: BootBudget;
  /** Where this platform records its members, so the next start can remove what it left. */
  recordDir: string;
  /**
   * Most (build, runtime) pools kept at once for one team; past it, that team's least recently
   * used one is dropped (never another team's). Default 4.
   */
  maxPools?: number;
  /**
   * How many sandboxes may be kept ready for a team now: its limit of sandboxes less those it
   * has live (unbounded for the platform's own templates). A team's stock, over all its
   * pools, stays within it: kept members are sandboxes the host holds for the team. Unset: no bound.
   */
  stockAllowance?(teamId: string): Promise<number>;
  /** A pool that gave out nothing for this long gives back one member above its minimum. Default 60 s. */
  idleShrinkMs?: number;
  /** A lone create's refill waits this long (default: SETTLE_MS of the runtime). */
  settleMs?: number;
  log: Logger;
  /** Told of every boot, for the platform's metrics. */
  onBoot?(runtime: RuntimeName, seconds: number, ok: boolean): void;
  /**
   * Run once in a member booted for stock before it is handed out, so that the cold paths it
   * would pay on its first command (envd's, a login shell's) are paid while nobody waits.
   */
  warmUp?(member: PoolMember, spec: BootSpec): Promise<void>;
}

/** Which pool, and how it boots a member given the member's id and token. */
export interface PoolKey {
  templateId: string;
  /** The team whose template it is: its stock counts against that team (see `stockAllowance`). */
  teamId?: string;
  buildId: string;
  runtime: RuntimeName;
  specFor(id: string, accessToken: string): BootSpec;
  /** This template's own limits, when it has any. */
  limits?: Partial<PoolLimits>;
  /**
   * Run in every member once booted, before it counts as ready (the template's start command
   * and its ready check): a create gets a member whose servers already answer.
   */
  prepare?(member: PoolMember): Promise<void>;
}

export interface PoolStats {
  templateId: string;
  teamId?: string;
  buildId: string;
  runtime: RuntimeName;
  ready: number;
  booting: number;
  waiting: number;
  target: number;
  min: number;
  max: number;
  hits: number;
  misses: number;
}
