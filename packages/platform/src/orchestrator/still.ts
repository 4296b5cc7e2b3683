import type { Sandbox } from "../model/sandbox.js";
import { bootAgain, bringBack } from "./boot.js";
import type { OrchestratorContext } from "./context.js";
import { decideOn, unhandled } from "./lifecycle.js";

/** What a snapshot sees of a sandbox held still. */
export interface StillState {
  /** Its writable layer on the host. */
  upper: string;
  sandbox: Sandbox;
  /** Its memory image, when it was checkpointed for this (or is paused checkpointed). */
  memoryImage?: string;
}

/**
 * Runs `fn` on the sandbox's state while it cannot change (for snapshots). With `memory`,
 * under gVisor, a running sandbox is checkpointed first (envd quiesced, memory to disk) and
 * `fn` gets the memory image too; the sandbox is restored afterwards and its processes go on.
 * Otherwise, or when the checkpoint is refused (the sandbox's own processes listen), a
 * running sandbox is synced (gVisor holds written data in its own memory until then) and
 * frozen for the duration; a paused one is still already (with its image when checkpointed).
 */
export function withStateStill<T>(
  ctx: OrchestratorContext,
  id: string,
  opts: { memory: boolean },
  fn: (state: StillState) => Promise<T>,
): Promise<T> {
  return ctx.lock.run(id, async () => {
    const decision = await decideOn(ctx, id, "snapshot");
    if (decision.to === "-") throw unhandled("snapshot", decision);
    const { sandbox } = decision;
    const upper = await ctx.host.mountFiles(id);
    const image = ctx.host.paths(id).checkpoint;
    if (decision.state !== "running") {
      const memoryImage = opts.memory && sandbox.pauseKind === "checkpointed" ? image : undefined;
      return fn({ upper, sandbox, memoryImage });
    }
    const envd = { address: ctx.live.of(id).address ?? "", accessToken: sandbox.envdAccessToken };
    if (
      opts.memory &&
      ctx.host.canCheckpoint(sandbox.runtime) &&
      (await ctx.host.agent.checkpointable(envd))
    ) {
      ctx.live.of(id).serving = false;
      ctx.onUnavailable?.(id);
      const checkpointed = await ctx.host.checkpoint(sandbox).then(
        () => true,
        (err: unknown) => {
          ctx.log.warn({ sandboxId: id, err }, "cannot checkpoint for a memory snapshot, keeping files only");
          return false;
        },
      );
      if (checkpointed) {
        try {
          return await fn({ upper, sandbox, memoryImage: image });
        } finally {
          await bringBack(ctx, sandbox);
          ctx.live.serve(id, ctx.live.of(id).address ?? "", sandbox);
        }
      }
      // this gVisor can take the sandbox down with a refused checkpoint: boot it from its files
      if (!(await ctx.host.agent.answers(envd.address))) await bootAgain(ctx, sandbox);
      envd.address = ctx.live.of(id).address ?? "";
      ctx.live.serve(id, envd.address, sandbox);
    }
    if (envd.address) await ctx.host.agent.runCommand(envd, { cmd: "sync", user: "root" });
    await ctx.host.freeze(sandbox);
    try {
      return await fn({ upper, sandbox });
    } finally {
      await ctx.host.thaw(sandbox);
    }
  });
}
