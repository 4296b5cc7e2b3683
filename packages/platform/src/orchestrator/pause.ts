import { crashPoint } from "../lib/crash-point.js";
import { nowIso } from "../lib/ids.js";
import type { PauseKind, Sandbox } from "../model/sandbox.js";
import { buildOf, initSandbox } from "./boot.js";
import { sandboxBootSpec } from "./boot-spec.js";
import type { OrchestratorContext } from "./context.js";
import { decideOn, unhandled } from "./lifecycle.js";

/** How long a sandbox resumed without its own timeout may run. */
const RESUMED_TIMEOUT_MS = 300_000;

/**
 * Pauses a running sandbox. Frozen by default (memory kept in RAM, deepened later: see
 * deepPause); `checkpointed` or `stopped` go deeper at once, e.g. when the caller does not
 * need the memory kept (`memory: false` on the API).
 */
export function pauseSandbox(ctx: OrchestratorContext, id: string, depth: PauseKind): Promise<PauseKind> {
  return ctx.lock.run(id, async (): Promise<PauseKind> => {
    const decision = await decideOn(ctx, id, "pause");
    if (decision.to === "stopped") return pauseBroken(ctx, decision.sandbox);
    if (decision.to !== "paused") throw unhandled("pause", decision);
    const { sandbox } = decision;
    // the proxy stops routing here before the sandbox stops answering
    const live = ctx.live.of(id);
    live.serving = false;
    ctx.onUnavailable?.(id);
    try {
      await ctx.host.freeze(sandbox);
    } catch (err) {
      live.serving = true;
      throw err;
    }
    clearTimeout(live.endTimer);
    crashPoint("pause:frozen");
    await ctx.store.sandboxes.update(id, { state: "paused", pauseKind: "frozen" });
    await ctx.store.events.record("sandbox.paused", {
      teamId: sandbox.teamId,
      sandboxId: id,
      data: { kind: "frozen" },
    });
    if (depth !== "frozen") return deepen(ctx, sandbox, depth);
    ctx.armDeepPause(id);
    return "frozen";
  });
}

/** A broken sandbox has only its files left: pausing keeps them, as a stopped pause does. */
async function pauseBroken(ctx: OrchestratorContext, sandbox: Sandbox): Promise<PauseKind> {
  clearTimeout(ctx.live.of(sandbox.id).endTimer);
  await ctx.store.sandboxes.update(sandbox.id, { state: "paused", pauseKind: "stopped", reason: null });
  await ctx.store.events.record("sandbox.paused", {
    teamId: sandbox.teamId,
    sandboxId: sandbox.id,
    data: { kind: "stopped" },
  });
  return "stopped";
}

/**
 * Moves a frozen sandbox out of memory: a checkpoint where the runtime can (gVisor, and only
 * while the sandbox's own processes hold no listening sockets), otherwise a stop that keeps
 * its files.
 */
export function deepPause(ctx: OrchestratorContext, id: string): Promise<PauseKind | undefined> {
  return ctx.lock.run(id, async () => {
    const decision = await decideOn(ctx, id, "deepen");
    if (decision.to === "-") return undefined;
    if (decision.to !== "checkpointed") throw unhandled("deepen", decision);
    return deepen(ctx, decision.sandbox, "checkpointed");
  });
}

/** Frozen → checkpointed (when wanted and possible) or stopped. Runs under the sandbox's lock. */
async function deepen(
  ctx: OrchestratorContext,
  sandbox: Sandbox,
  want: "checkpointed" | "stopped",
): Promise<PauseKind> {
  await ctx.host.thaw(sandbox);
  let kind: PauseKind = "stopped";
  if (want === "checkpointed" && ctx.host.canCheckpoint(sandbox.runtime)) {
    try {
      await ctx.host.checkpoint(sandbox);
      kind = "checkpointed";
    } catch (err) {
      // runsc explains a refused save with its whole state dump (tens of KB on one line)
      ctx.log.warn({ sandboxId: sandbox.id, reason: briefly(err) }, "checkpoint failed, stopping instead");
    }
  }
  if (kind === "stopped") await ctx.host.stop(sandbox);
  const live = ctx.live.of(sandbox.id);
  live.address = undefined;
  clearTimeout(live.deepPauseTimer);
  await ctx.store.sandboxes.update(sandbox.id, { pauseKind: kind });
  await ctx.store.events.record("sandbox.paused", {
    teamId: sandbox.teamId,
    sandboxId: sandbox.id,
    data: { kind },
  });
  return kind;
}

/**
 * Resumes a paused (or broken) sandbox; `connect` to a running one only gives it the longer of
 * its timeouts, where `resume` refuses it. Returns the sandbox and whether it was paused.
 */
export function resumeSandbox(
  ctx: OrchestratorContext,
  id: string,
  op: "resume" | "connect",
  timeoutSeconds: number | undefined,
  admit: (teamId: string) => Promise<() => void>,
): Promise<{ sandbox: Sandbox; resumed: boolean }> {
  return ctx.lock.run(id, async () => {
    const decision = await decideOn(ctx, id, op);
    if (decision.to !== "running") throw unhandled(op, decision);
    const { sandbox } = decision;
    const endAt =
      timeoutSeconds === undefined ? undefined : nowIso(new Date(Date.now() + timeoutSeconds * 1000));
    if (decision.state === "running") {
      if (endAt && endAt > sandbox.endAt) {
        sandbox.endAt = endAt;
        await ctx.store.sandboxes.update(id, { endAt });
        ctx.armDeadline(sandbox);
      }
      return { sandbox, resumed: false };
    }
    // a resumed sandbox runs again: it counts against the team's quota as a new one would
    const release = await admit(sandbox.teamId);
    try {
      return await resumePaused(ctx, sandbox, endAt);
    } finally {
      release();
    }
  });
}

async function resumePaused(
  ctx: OrchestratorContext,
  sandbox: Sandbox,
  endAt: string | undefined,
): Promise<{ sandbox: Sandbox; resumed: boolean }> {
  const id = sandbox.id;
  const live = ctx.live.of(id);
  clearTimeout(live.deepPauseTimer);
  // a broken sandbox boots afresh from its files, as a stopped one does
  if (sandbox.state === "error") sandbox.pauseKind = "stopped";
  if (sandbox.pauseKind === "frozen") {
    await ctx.host.thaw(sandbox);
    live.address ??= await ctx.host.address(id);
  } else {
    const spec = sandboxBootSpec(ctx.dataDir, sandbox, await buildOf(ctx, sandbox));
    live.address =
      sandbox.pauseKind === "checkpointed" ? await ctx.host.restore(spec) : await ctx.host.boot(spec);
    if (sandbox.pauseKind === "stopped") await initSandbox(ctx, sandbox, live.address);
  }
  if (!live.address) throw new Error(`sandbox ${id} has no address after resuming`);
  crashPoint("resume:started");
  ctx.live.serve(id, live.address, sandbox);
  sandbox.state = "running";
  delete sandbox.pauseKind;
  sandbox.endAt = endAt ?? nowIso(new Date(Date.now() + RESUMED_TIMEOUT_MS));
  delete sandbox.reason;
  await ctx.store.sandboxes.update(id, {
    state: "running",
    pauseKind: null,
    endAt: sandbox.endAt,
    reason: null,
  });
  await ctx.store.events.record("sandbox.resumed", { teamId: sandbox.teamId, sandboxId: id });
  ctx.armDeadline(sandbox);
  return { sandbox, resumed: true };
}

/** An error's first line, its middle left out when it is long: the start says what, the end why. */
export function briefly(err: unknown): string {
  const line = (err instanceof Error ? err.message : String(err)).split("\n")[0] ?? "";
  return line.length <= 600 ? line : `${line.slice(0, 300)} … ${line.slice(-300)}`;
}
