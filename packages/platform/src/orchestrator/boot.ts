import path from "node:path";
import { isOpenEgress } from "../model/network.js";
import type { Sandbox } from "../model/sandbox.js";
import type { Build, MemoryImage } from "../model/template.js";
import { sandboxBootSpec } from "./boot-spec.js";
import type { OrchestratorContext } from "./context.js";
import { startTemplateCommand } from "./start-command.js";
import type { PoolMember } from "./warm-pool.js";

/** The sandbox's build, which must exist while the sandbox does. */
export async function buildOf(ctx: OrchestratorContext, sandbox: Sandbox): Promise<Build> {
  const build = await ctx.store.templates.getBuild(sandbox.buildId);
  if (!build) throw new Error(`build ${sandbox.buildId} of sandbox ${sandbox.id} is gone`);
  return build;
}

/** envd's /init for this sandbox; `currentToken` is the token envd runs with when not its own yet. */
export function initSandbox(
  ctx: Pick<OrchestratorContext, "host">,
  sandbox: Sandbox,
  address: string,
  currentToken?: string,
): Promise<void> {
  return ctx.host.agent.init(
    { address, accessToken: currentToken ?? sandbox.envdAccessToken },
    {
      // the sandbox's own variables win over the host's
      envVars: { ...ctx.host.sandboxEnv, ...sandbox.envVars },
      identity: { sandboxId: sandbox.id, templateId: sandbox.templateId, teamId: sandbox.teamId },
      accessToken: sandbox.envdAccessToken,
    },
  );
}

/** Boots the sandbox from its files and gives envd its identity. Returns its address. */
export async function coldBoot(ctx: OrchestratorContext, sandbox: Sandbox, build: Build): Promise<string> {
  const address = await ctx.host.boot(sandboxBootSpec(ctx.dataDir, sandbox, build));
  await initSandbox(ctx, sandbox, address);
  return address;
}

/**
 * A new sandbox's first start: from a memory image, from a warm pool member (which takes its
 * identity), or booted for it alone (`cold`: what it needs cannot be added to a member).
 */
export async function firstStart(
  ctx: OrchestratorContext,
  sandbox: Sandbox,
  build: Build,
  from: { memory: MemoryImage } | { member: PoolMember } | "cold",
): Promise<string> {
  if (from !== "cold" && "memory" in from) return restoreSnapshot(ctx, sandbox, build, from.memory);
  // a member ran the start command in the pool
  if (from !== "cold") return handOver(ctx, from.member, sandbox);
  return bootWithStartCommand(ctx, sandbox, build);
}

/** A cold boot with the template's start command run and ready. */
async function bootWithStartCommand(
  ctx: OrchestratorContext,
  sandbox: Sandbox,
  build: Build,
): Promise<string> {
  const address = await coldBoot(ctx, sandbox, build);
  await startTemplateCommand(ctx.host.agent, address, sandbox.envdAccessToken, build);
  return address;
}

/**
 * Starts a sandbox from a memory snapshot: the image's processes continue (the start command
 * is not run again), and envd is handed the sandbox's own token and environment through the
 * token in the image's memory. Boots from the snapshot's files when the image cannot be used.
 */
async function restoreSnapshot(
  ctx: OrchestratorContext,
  sandbox: Sandbox,
  build: Build,
  memory: MemoryImage,
): Promise<string> {
  const image = path.resolve(ctx.dataDir, memory.image);
  try {
    const address = await ctx.host.bootFromImage(sandboxBootSpec(ctx.dataDir, sandbox, build), image);
    // a restored envd has just re-opened its listener: a first connection can still be cut
    for (let attempt = 1; ; attempt++) {
      try {
        await initSandbox(ctx, sandbox, address, memory.accessToken);
        return address;
      } catch (err) {
        if (attempt >= 3) throw err;
        ctx.log.warn({ sandboxId: sandbox.id, err }, "envd /init after a restore failed, retrying");
        await new Promise((r) => setTimeout(r, 100 * attempt));
      }
    }
  } catch (err) {
    ctx.log.warn(
      { sandboxId: sandbox.id, err },
      "memory snapshot could not be restored, booting from its files",
    );
    await ctx.host.destroy(sandbox);
    return bootWithStartCommand(ctx, sandbox, build);
  }
}

/**
 * Gives a warm pool member the sandbox's identity: its own envd token (replacing the pool's)
 * and environment variables through /init, and its internet setting. A member that does not
 * take it is replaced by a cold boot under the same id.
 */
async function handOver(ctx: OrchestratorContext, member: PoolMember, sandbox: Sandbox): Promise<string> {
  try {
    if (!isOpenEgress(sandbox.egress)) await ctx.host.setEgress(sandbox.id, sandbox.egress);
    await initSandbox(ctx, sandbox, member.address, member.accessToken);
    return member.address;
  } catch (err) {
    ctx.log.warn({ sandboxId: sandbox.id, err }, "warm pool member did not take its sandbox, booting one");
    await ctx.host.destroy(member);
    return bootWithStartCommand(ctx, sandbox, await buildOf(ctx, sandbox));
  }
}

/** Boots a sandbox whose container is gone from its files; its processes are lost. */
export async function bootAgain(ctx: OrchestratorContext, sandbox: Sandbox): Promise<void> {
  const build = await buildOf(ctx, sandbox);
  await ctx.host.stop(sandbox).catch(() => undefined);
  ctx.live.of(sandbox.id).address = await coldBoot(ctx, sandbox, build);
}

/**
 * Restores a sandbox checkpointed for a snapshot; boots it from its files when there is no
 * image or the restore fails (its processes are lost then, its files are not).
 */
export async function bringBack(ctx: OrchestratorContext, sandbox: Sandbox): Promise<void> {
  try {
    const spec = sandboxBootSpec(ctx.dataDir, sandbox, await buildOf(ctx, sandbox));
    ctx.live.of(sandbox.id).address = await ctx.host.restore(spec);
  } catch (err) {
    ctx.log.error({ sandboxId: sandbox.id, err }, "restore after a snapshot failed, booting from files");
    await bootAgain(ctx, sandbox);
  }
}
