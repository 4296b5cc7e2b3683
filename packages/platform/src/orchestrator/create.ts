import { newSandboxId, newSecret, nowIso } from "../lib/ids.js";
import { quotaExceeded } from "../model/errors.js";
import type { RuntimeName, Sandbox } from "../model/sandbox.js";
import type { Team } from "../model/team.js";
import { type Build, memoryImageOf, runtimeSpecOf, type Template } from "../model/template.js";
import { firstStart } from "./boot.js";
import type { OrchestratorContext } from "./context.js";

export interface CreateSandboxRequest {
  team: Team;
  template: Template;
  build: Build;
  alias?: string;
  timeoutSeconds: number;
  metadata: Record<string, string>;
  envVars: Record<string, string>;
  allowInternet: boolean;
  autoPause: boolean;
  autoResume: boolean;
  runtime?: RuntimeName;
  /** Refuse (a `quota` error) when the team already has this many starting or running. */
  maxLivePerTeam?: number;
}

/**
 * Creates a sandbox: on record first (a crash from then on is cleaned up as a sandbox that was
 * starting), then started from a memory image, a warm pool member or a cold boot. A team's
 * quota check and its insert are serialised, so concurrent creates cannot overshoot.
 */
export async function createSandbox(
  ctx: OrchestratorContext,
  teamLock: { run<T>(key: string, task: () => Promise<T>): Promise<T> },
  req: CreateSandboxRequest,
  keepWarm: (template: Template, build: Build, runtime: RuntimeName) => void,
): Promise<Sandbox> {
  const now = new Date();
  const memory = memoryImageOf(req.build);
  // a memory snapshot continues under the runtime that wrote it, unless another is asked for
  const runtime = req.runtime ?? memory?.runtime ?? ctx.defaultRuntime;
  const restoreMemory = memory?.runtime === runtime ? memory : undefined;
  const member = restoreMemory ? undefined : ctx.pool?.claim(req.build.id, runtime);
  const sandbox: Sandbox = {
    id: member?.id ?? newSandboxId(),
    teamId: req.team.id,
    templateId: req.template.id,
    buildId: req.build.id,
    ...(req.alias ? { alias: req.alias } : {}),
    state: "starting",
    runtime,
    startedAt: nowIso(now),
    endAt: nowIso(new Date(now.getTime() + req.timeoutSeconds * 1000)),
    cpuCount: req.build.cpuCount,
    memoryMB: req.build.memoryMB,
    diskSizeMB: req.build.diskSizeMB,
    metadata: req.metadata,
    envVars: { ...runtimeSpecOf(req.build).envVars, ...req.envVars },
    envdAccessToken: newSecret(),
    allowInternet: req.allowInternet,
    autoPause: req.autoPause,
    autoResume: req.autoResume,
  };
  try {
    await teamLock.run(req.team.id, async () => {
      const limit = req.maxLivePerTeam;
      if (limit !== undefined && (await ctx.store.sandboxes.countLive(req.team.id)) >= limit) {
        throw quotaExceeded(`your team already runs ${limit} sandboxes, the most it may: kill one first`, 5);
      }
      await ctx.store.sandboxes.insert(sandbox);
    });
  } catch (err) {
    if (member) await ctx.host.destroy(member).finally(() => ctx.pool?.handedOver(member));
    throw err;
  }
  if (member) await ctx.pool?.handedOver(member);
  return ctx.lock.run(sandbox.id, async () => {
    try {
      const address = await firstStart(ctx, sandbox, req.build, { memory: restoreMemory, member });
      ctx.live.serve(sandbox.id, address, sandbox.envdAccessToken);
      sandbox.state = "running";
      await ctx.store.sandboxes.update(sandbox.id, { state: "running" });
      await ctx.store.templates.recordSpawn(req.template.id);
      await ctx.store.events.record("sandbox.created", {
        teamId: sandbox.teamId,
        sandboxId: sandbox.id,
        data: { templateId: sandbox.templateId, runtime: sandbox.runtime },
      });
      ctx.armDeadline(sandbox);
      if (!restoreMemory) keepWarm(req.template, req.build, runtime);
      return sandbox;
    } catch (err) {
      ctx.log.error({ sandboxId: sandbox.id, err }, "sandbox failed to start");
      ctx.live.delete(sandbox.id);
      await ctx.host.destroy(sandbox).catch(() => undefined);
      await ctx.store.sandboxes.update(sandbox.id, { state: "killed", killedAt: nowIso() });
      throw err;
    }
  });
}
