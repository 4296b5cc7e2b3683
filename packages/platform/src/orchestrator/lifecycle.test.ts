/**
 * Walks every cell of the lifecycle table (lifecycle.ts) against the orchestrator, over the
 * fake host and a real store: a sandbox is brought into each state the way it gets there in
 * use, the operation is run, and the state on record, the host's container and the answer
 * must be what the cell says. The messages are spelt out here, not taken from lifecycle.ts.
 */
import { DomainError, type ErrorCode } from "../model/errors.js";
import { OPEN_EGRESS } from "../model/network.js";
import {
  type Cell,
  isRefusal,
  LIFE_STATES,
  type LifeState,
  OPERATIONS,
  type Operation,
  type Refusal,
  transition,
} from "./lifecycle.js";
import { CONDITION_OF, LifecycleHarness } from "./testing/harness.js";

/** What the API answers for each refusal: code and message, as clients see them today. */
function expectedRefusal(
  refusal: Refusal,
  id: string,
  recorded: string,
): { code: ErrorCode; message: string } {
  switch (refusal) {
    case "404":
      return { code: "not_found", message: `sandbox ${id} not found` };
    case "409 starting":
      return { code: "conflict", message: `sandbox ${id} is still starting` };
    case "409 paused":
      return { code: "conflict", message: `sandbox ${id} is already paused` };
    case "409 running":
      return { code: "conflict", message: `sandbox ${id} is already running` };
    case "409 not running":
      return {
        code: "conflict",
        message: `sandbox ${id} is ${recorded}: resume it before changing its network`,
      };
    case "409 elsewhere":
      return {
        code: "conflict",
        message: `sandbox ${id} runs on node node-b, not on local: send this to the cluster's api`,
      };
    case "503 lost":
      return {
        code: "unavailable",
        message: `sandbox ${id} is lost: its node stopped answering; it is back when its node is, or kill it to forget it`,
      };
  }
}

/** Runs `op` on the sandbox as the API or the platform would. */
async function perform(h: LifecycleHarness, op: Operation, id: string): Promise<unknown> {
  const o = h.orchestrator;
  switch (op) {
    case "pause":
      return o.pause(id);
    case "resume":
      return o.resume(id, undefined, "resume");
    case "connect":
      return o.resume(id, 60, "connect");
    case "kill":
      return o.kill(id);
    case "setTimeout":
      return o.setTimeout(id, 600);
    case "setNetwork":
      return o.setEgress(id, { ...OPEN_EGRESS, denyOut: ["10.0.0.0/8"] });
    case "snapshot":
      return o.withStateStill(id, { memory: true }, async (still) => still.sandbox.id);
    case "timeout":
    case "timeoutToPause":
      // its end of life is now
      await h.store.sandboxes.update(id, { endAt: new Date(Date.now() - 1000).toISOString() });
      return o.expire(id);
    case "deepen":
      return o.deepPause(id);
    case "agentDied":
      if (h.host.conditionOf(id) === "running" && (await h.stateOf(id)) !== "elsewhere")
        h.host.breakAgent(id);
      return o.checkHealth(id);
    case "wake":
      return o.resumeOnTraffic(id);
    case "adopt":
      return h.restart();
  }
}

/** The state a destination names, for a sandbox of these settings (paused: frozen by default). */
function stateAfter(cell: Exclude<Cell, Refusal | "-">): LifeState {
  return cell === "paused" ? "frozen" : cell;
}

/** What a sandbox in `state` is created with for `op` to apply (autoPause, autoResume). */
function settingsFor(op: Operation) {
  if (op === "timeoutToPause") return { autoPause: true };
  if (op === "wake") return { autoResume: true };
  return {};
}

const CELLS = OPERATIONS.flatMap((op) =>
  LIFE_STATES.map((state) => ({ op, state, cell: transition(state, op) })),
);

describe("the lifecycle table, cell by cell", () => {
  let h: LifecycleHarness;
  beforeAll(async () => {
    h = await LifecycleHarness.open();
  });
  afterAll(async () => {
    await h.close();
  });

  it.each(CELLS)("$op of a $state sandbox: $cell", async ({ op, state, cell }) => {
    const id = await h.sandboxIn(state, settingsFor(op));
    expect(await h.stateOf(id)).toBe(state);
    const recorded = (await h.store.sandboxes.get(id))?.state ?? "";
    const conditionBefore = h.host.conditionOf(id);
    const outcome = await perform(h, op, id).then(
      () => undefined,
      (err: unknown) => err,
    );

    if (isRefusal(cell)) {
      expect(outcome).toBeInstanceOf(DomainError);
      const { code, message } = outcome as DomainError;
      expect({ code, message }).toEqual(expectedRefusal(cell, id, recorded));
      expect(await h.stateOf(id)).toBe(state);
      expect(h.host.conditionOf(id)).toBe(conditionBefore);
      return;
    }
    expect(outcome).toBeUndefined();
    if (cell === "-") {
      expect(await h.stateOf(id)).toBe(state);
      expect(h.host.conditionOf(id)).toBe(conditionBefore);
      return;
    }
    const after = stateAfter(cell);
    expect(await h.stateOf(id)).toBe(after);
    // a lost sandbox's container is its node's: forgetting it here leaves it be
    if (state !== "lost" || after !== "killed") expect(h.host.conditionOf(id)).toBe(CONDITION_OF[after]);
    const route = await h.orchestrator.route(id);
    if (after === "running") {
      // served where its container answers, and its envd answers to its own token
      expect(route).toMatchObject({ state: "running", address: h.host.sandboxes.get(id)?.address });
      const token = (await h.store.sandboxes.get(id))?.envdAccessToken;
      expect(await h.host.agent.answers(h.host.sandboxes.get(id)?.address)).toBe(true);
      expect(h.host.sandboxes.get(id)?.envdToken ?? token).toBe(token);
    } else {
      expect(route?.state).not.toBe("running");
    }
  });
});
