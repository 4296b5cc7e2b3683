import { conflict, type DomainError, notFound } from "../model/errors.js";
import { lostSandbox, type Sandbox } from "../model/sandbox.js";
import type { OrchestratorContext } from "./context.js";

/**
 * Where a sandbox is in its life, as this node sees it: the state the store records, with a
 * paused sandbox's depth, and two views of sandboxes this node cannot act on.
 * - `killed`: killed, or never existed (the API answers both alike);
 * - `starting`: on record, its create still under way (or cut short by a crash: adoption kills it);
 * - `frozen` | `checkpointed` | `stopped`: paused at that depth (memory in RAM, memory on
 *   disk, files only);
 * - `error`: its agent (envd) died by itself; its files are kept;
 * - `lost`: its node stopped answering (beyond one machine);
 * - `elsewhere`: another node runs it.
 */
export type LifeState =
  | "killed"
  | "starting"
  | "running"
  | "frozen"
  | "checkpointed"
  | "stopped"
  | "error"
  | "lost"
  | "elsewhere";

/**
 * What can happen to a sandbox. From the API: pause, resume (`POST /sandboxes/{id}/resume`),
 * connect (`POST /v2/sandboxes/{id}/connect`: resumes, or only extends a running one's
 * timeout), kill, setTimeout, setNetwork, snapshot (and fork, which snapshots first). From
 * the platform: timeout (its end of life; timeoutToPause for a sandbox created with
 * autoPause), deepen (a frozen pause moved out of memory after `--deep-pause-after`),
 * agentDied (the health check found its cgroup empty), wake (traffic through the proxy to a
 * sandbox created with autoResume), adopt (the platform process started again).
 */
export type Operation =
  | "pause"
  | "resume"
  | "connect"
  | "kill"
  | "setTimeout"
  | "setNetwork"
  | "snapshot"
  | "timeout"
  | "timeoutToPause"
  | "deepen"
  | "agentDied"
  | "wake"
  | "adopt";

/** What the API answers when the table refuses an operation (status, then why). */
export type Refusal =
  | "404"
  | "409 starting"
  | "409 paused"
  | "409 running"
  | "409 not running"
  | "409 elsewhere"
  | "503 lost";

/**
 * Where an operation takes the sandbox: a state, or `paused` (at the depth the operation
 * asks: frozen unless the API said `memory: false`, or the sandbox's autoPauseMemory did).
 */
export type Destination = Exclude<LifeState, "lost" | "elsewhere"> | "paused";

/** One cell of the table: where the sandbox goes, `-` (nothing to do), or the refusal. */
export type Cell = Destination | "-" | Refusal;

const STATES = [
  "killed",
  "starting",
  "running",
  "frozen",
  "checkpointed",
  "stopped",
  "error",
  "lost",
  "elsewhere",
] as const satisfies readonly LifeState[];

/** One cell per state, in the order of STATES. */
type CellPer<T extends readonly unknown[]> = { readonly [K in keyof T]: Cell };
type Row = CellPer<typeof STATES>;

/**
 * The lifecycle: operation × state → where the sandbox goes, or what the API answers. The
 * orchestrator looks every operation up here (`decide`) before it touches anything.
 *
 * Operations on one sandbox run one at a time (the orchestrator's per-sandbox lock): one that
 * arrives while another is under way (pausing, resuming, killing, snapshotting, starting)
 * waits for it and is then looked up from the state that one left. So a pause while pausing
 * is a pause of a paused sandbox (409), a kill while resuming kills the resumed sandbox.
 * A step that fails leaves the state the operation started from (see the unit tests for each
 * step: lifecycle-failures.test.ts); the exceptions are noted in the comments below. Every cell
 * is walked in lifecycle.test.ts, operations that meet in lifecycle-races.test.ts.
 *
 * Create is not a row: a new sandbox is `starting` on record, then `running`, or `killed`
 * when its start fails.
 */
// biome-ignore format: a table, aligned by hand
const TABLE: Record<Operation, Row> = {
  //                killed  starting           running        frozen             checkpointed       stopped            error              lost        elsewhere
  pause:          ["404",  "409 starting",    "paused",      "409 paused",      "409 paused",      "409 paused",      "stopped",         "503 lost", "409 elsewhere"],
  resume:         ["404",  "409 starting",    "409 running", "running",         "running",         "running",         "running",         "503 lost", "409 elsewhere"],
  connect:        ["404",  "409 starting",    "running",     "running",         "running",         "running",         "running",         "503 lost", "409 elsewhere"],
  kill:           ["404",  "killed",          "killed",      "killed",          "killed",          "killed",          "killed",          "killed",   "409 elsewhere"],
  setTimeout:     ["404",  "starting",        "running",     "frozen",          "checkpointed",    "stopped",         "error",           "503 lost", "409 elsewhere"],
  setNetwork:     ["404",  "409 not running", "running",     "409 not running", "409 not running", "409 not running", "409 not running", "503 lost", "409 elsewhere"],
  snapshot:       ["404",  "409 starting",    "running",     "frozen",          "checkpointed",    "stopped",         "error",           "503 lost", "409 elsewhere"],
  timeout:        ["-",    "killed",          "killed",      "-",               "-",               "-",               "killed",          "-",        "-"],
  timeoutToPause: ["-",    "killed",          "paused",      "-",               "-",               "-",               "stopped",         "-",        "-"],
  deepen:         ["-",    "-",               "-",           "checkpointed",    "-",               "-",               "-",               "-",        "-"],
  agentDied:      ["-",    "-",               "error",       "-",               "-",               "-",               "-",               "-",        "-"],
  wake:           ["-",    "-",               "-",           "running",         "running",         "running",         "-",               "-",        "-"],
  adopt:          ["-",    "killed",          "running",     "frozen",          "checkpointed",    "stopped",         "error",           "running",  "-"],
};
// Cells worth a word:
// - pause × error: a broken sandbox has only its files left; pausing keeps them (stopped).
// - pause × running with `memory: false`: frozen first, then stopped. When the stop fails it
//   stays frozen on record, though deepening thawed its container: a connect serves it again.
// - connect × running: stays running, with the longer of its timeout and the one asked for
//   (200, where a resume answers 201). resume × running is E2B's 409.
// - kill × lost: forgotten here; its node, back, removes what is left of it.
// - setTimeout × paused: recorded; a resume sets its own end of life.
// - snapshot × running: held still meanwhile (checkpointed and restored, or frozen and thawed).
// - timeout × paused, lost: nothing; a pause stopped the timer, and a lost sandbox's node
//   arms it again when it adopts the sandbox.
// - deepen × frozen: stopped instead where the runtime cannot checkpoint (runc), the
//   sandbox's own processes hold sockets, or the checkpoint fails.
// - wake × running: the proxy routes to it without asking; error: the proxy answers 502
//   with the reason, and a connect boots it again.
// - adopt: as recorded when its container is found so; running or frozen with the container
//   gone are recovered as stopped (files kept); frozen found running is thawed first
//   (a pause cut short). adopt × lost: its node is back; it is what it was (running here, or
//   paused at its depth), then adopted like any other.

/** Where the sandbox is in its life as this node sees it. */
export function lifeStateOf(sandbox: Sandbox | undefined, nodeId: string): LifeState {
  if (sandbox === undefined || sandbox.state === "killed") return "killed";
  if (sandbox.state === "lost") return "lost";
  // beyond one machine: only the node that runs a sandbox acts on it
  if (sandbox.nodeId && sandbox.nodeId !== nodeId) return "elsewhere";
  if (sandbox.state === "paused") return sandbox.pauseKind ?? "stopped";
  return sandbox.state;
}

/** The table's cell for `op` on a sandbox in `state`. */
export function transition(state: LifeState, op: Operation): Cell {
  return TABLE[op][STATES.indexOf(state)]!;
}

export function isRefusal(cell: Cell): cell is Refusal {
  return /^\d{3}( |$)/.test(cell);
}

/** The error the API answers for a refusal, with today's messages. */
export function refusalError(
  refusal: Refusal,
  id: string,
  sandbox: Sandbox | undefined,
  nodeId: string,
): DomainError {
  switch (refusal) {
    case "404":
      return notFound(`sandbox ${id} not found`);
    case "409 starting":
      return conflict(`sandbox ${id} is still starting`);
    case "409 paused":
      return conflict(`sandbox ${id} is already paused`);
    case "409 running":
      return conflict(`sandbox ${id} is already running`);
    case "409 not running":
      return conflict(`sandbox ${id} is ${sandbox?.state}: resume it before changing its network`);
    case "409 elsewhere":
      return conflict(
        `sandbox ${id} runs on node ${sandbox?.nodeId}, not on ${nodeId}: send this to the cluster's api`,
      );
    case "503 lost":
      return lostSandbox({ id, reason: sandbox?.reason });
  }
}

/** What an operation does to a sandbox, once the table has not refused it. */
export type Decision =
  | { state: LifeState; to: "-"; sandbox: Sandbox | undefined }
  | { state: LifeState; to: Destination; sandbox: Sandbox };

/** Looks `op` up for the sandbox as recorded; throws the refusal's error. */
export function decide(op: Operation, id: string, sandbox: Sandbox | undefined, nodeId: string): Decision {
  const state = lifeStateOf(sandbox, nodeId);
  const cell = transition(state, op);
  if (isRefusal(cell)) throw refusalError(cell, id, sandbox, nodeId);
  if (cell === "-") return { state, to: cell, sandbox };
  // the `killed` column has destinations for no operation: a destination has a record
  return { state, to: cell, sandbox: sandbox! };
}

/** `decide` for the sandbox as the store has it now (call it under the sandbox's lock). */
export async function decideOn(
  ctx: Pick<OrchestratorContext, "store">,
  id: string,
  op: Operation,
): Promise<Decision> {
  return decide(op, id, await ctx.store.sandboxes.get(id), ctx.store.nodeId);
}

/** For a cell the orchestrator has no step for: the table and the code disagree. */
export function unhandled(op: Operation, d: Pick<Decision, "state" | "to">): Error {
  return new Error(`lifecycle: no step for ${op} from ${d.state} to ${d.to}`);
}

/** Every state and operation, for tests that walk the whole table. */
export const LIFE_STATES: readonly LifeState[] = STATES;
export const OPERATIONS = Object.keys(TABLE) as Operation[];
