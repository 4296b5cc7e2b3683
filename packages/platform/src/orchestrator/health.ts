import type { OrchestratorContext } from "./context.js";
import { decideOn, unhandled } from "./lifecycle.js";

/** How often running sandboxes are looked at: one file read each. */
const CHECK_EVERY_MS = 2_000;

/**
 * Notices a sandbox that stopped working by itself: running on record, but its cgroup holds
 * no task (its init exited, and envd with it: killed from inside, crashed, or taken by the OOM
 * killer). It is marked `error` with the reason and logged, its connections are cut and what
 * is left of its container removed; its files stay, so a connect boots it afresh.
 * Resolves whether the sandbox was found broken.
 */
export function checkSandbox(ctx: OrchestratorContext, id: string): Promise<boolean> {
  return ctx.lock.run(id, async () => {
    const decision = await decideOn(ctx, id, "agentDied");
    if (decision.to === "-") return false;
    if (decision.to !== "error") throw unhandled("agentDied", decision);
    const { sandbox } = decision;
    const life = await ctx.host.life(sandbox);
    // no cgroup where we put it: nothing to tell from (never seen while a sandbox runs)
    if (life.processes !== 0) return false;
    const reason = life.oomKills
      ? "its agent (envd) was ended by the kernel's OOM killer: the sandbox's processes are gone"
      : "its agent (envd) exited (killed from inside, or crashed): the sandbox's processes are gone";
    const live = ctx.live.of(id);
    live.serving = false;
    live.address = undefined;
    ctx.onUnavailable?.(id);
    await ctx.host.stop(sandbox).catch((err: unknown) => {
      ctx.log.warn({ sandboxId: id, err }, "could not remove what is left of a broken sandbox's container");
    });
    await ctx.store.sandboxes.update(id, { state: "error", reason });
    await ctx.store.events.record("sandbox.broken", {
      teamId: sandbox.teamId,
      sandboxId: id,
      data: { reason },
    });
    ctx.log.warn({ sandboxId: id, reason }, "sandbox stopped working");
    return true;
  });
}

/** Looks at every serving sandbox now and then (see checkSandbox). */
export class HealthWatch {
  private timer: NodeJS.Timeout | undefined;
  private checking = false;

  constructor(private readonly ctx: OrchestratorContext) {}

  start(): void {
    this.timer = setInterval(() => void this.tick(), CHECK_EVERY_MS);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  private async tick(): Promise<void> {
    if (this.checking) return;
    this.checking = true;
    try {
      for (const [id] of [...this.ctx.live.serving()]) {
        // outside the lock first: a running sandbox costs one read, and no wait behind an operation
        if ((await this.ctx.host.processes({ id })) !== 0) continue;
        await checkSandbox(this.ctx, id);
      }
    } catch (err) {
      this.ctx.log.error({ err }, "sandbox health check failed");
    } finally {
      this.checking = false;
    }
  }
}
