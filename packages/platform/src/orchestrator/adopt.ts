import { nowIso } from "../lib/ids.js";
import type { OrchestratorContext } from "./context.js";
import { decide } from "./lifecycle.js";

/**
 * After a restart: running containers are adopted as they are (thawed first when a pause or
 * snapshot was cut short after freezing them); sandboxes whose container is gone are
 * recovered as stopped (files kept); leftovers of creates that never finished go.
 * Sandboxes the catalog calls `lost` (their node, this one, was away) are adopted like any
 * other but stay `lost` in the catalog: their ids are returned, for `reconcileLost` once the
 * node answers again.
 */
export async function adoptSandboxes(ctx: OrchestratorContext): Promise<string[]> {
  const lost: string[] = [];
  for (const sandbox of await ctx.store.sandboxes.live()) {
    const id = sandbox.id;
    try {
      const decision = decide("adopt", id, sandbox, ctx.store.nodeId);
      if (decision.to === "-") continue;
      if (decision.state === "lost") {
        // its node (this one) is back: it is what it was, then adopted like any other
        sandbox.state = sandbox.pauseKind ? "paused" : "running";
        lost.push(id);
      }
      if (decision.to === "killed") {
        await ctx.host.destroy(sandbox);
        await ctx.store.sandboxes.update(id, { state: "killed", killedAt: nowIso() });
        continue;
      }
      let status = await ctx.host.status(sandbox);
      if (sandbox.state === "running" && status === "paused") {
        // frozen by a pause or snapshot the previous process did not finish: it never paused
        await ctx.host.thaw(sandbox);
        status = await ctx.host.status(sandbox);
      }
      if (status === "running" || status === "paused") await ctx.host.rememberEgress(id, sandbox.egress);
      if (sandbox.state === "running" && status === "running") {
        const address = await ctx.host.address(id);
        if (address) ctx.live.serve(id, address, sandbox);
        ctx.armDeadline(sandbox);
      } else if (sandbox.state === "paused" && sandbox.pauseKind === "frozen" && status === "paused") {
        ctx.live.of(id).address = await ctx.host.address(id);
        ctx.armDeepPause(id);
      } else if (
        (sandbox.state === "paused" && sandbox.pauseKind !== "frozen") ||
        sandbox.state === "error"
      ) {
        ctx.live.of(id);
        if (sandbox.state === "error") ctx.armDeadline(sandbox);
      } else {
        await ctx.host.stop(sandbox);
        await ctx.store.sandboxes.update(id, { state: "paused", pauseKind: "stopped" });
        await ctx.store.events.record("sandbox.recovered", { teamId: sandbox.teamId, sandboxId: id });
        ctx.live.of(id);
      }
    } catch (err) {
      ctx.log.error({ sandboxId: id, err }, "could not adopt sandbox");
    }
  }
  return lost;
}

/** Adopted sandboxes that were `lost` are what they were again, now that their node serves them. */
export async function reconcileLost(ctx: OrchestratorContext, ids: Iterable<string>): Promise<void> {
  for (const id of ids) {
    const sandbox = await ctx.store.sandboxes.get(id);
    // killed meanwhile (a lost sandbox can be), or recovered as stopped by adopt
    if (sandbox?.state !== "lost") continue;
    const state = sandbox.pauseKind ? "paused" : "running";
    await ctx.store.sandboxes.update(id, { state, reason: null });
    await ctx.store.events.record("sandbox.reconciled", { teamId: sandbox.teamId, sandboxId: id });
  }
}
