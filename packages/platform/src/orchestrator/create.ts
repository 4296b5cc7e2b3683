import { crashPoint } from "../lib/crash-point.js";
import { newSandboxId, newSecret, nowIso } from "../lib/ids.js";
import { KeyedLock } from "../lib/keyed-lock.js";
import { spans } from "../lib/spans.js";
import { quotaExceeded } from "../model/errors.js";
import type { IdentityTokens } from "../model/identity.js";
import type { EgressPolicy, IngressPolicy } from "../model/network.js";
import type { RuntimeName, Sandbox } from "../model/sandbox.js";
import type { Team } from "../model/team.js";
import { type Build, memoryImageOf, runtimeSpecOf, type Template } from "../model/template.js";
import type { VolumeMount } from "../model/volume.js";
import { firstStart } from "./boot.js";
import type { OrchestratorContext } from "./context.js";
import { briefly } from "./pause.js";
import type { PoolKey, PoolMember } from "./warm-pool.js";

export interface CreateSandboxRequest {
  team: Team;
  template: Template;
  build: Build;
  alias?: string;
  timeoutSeconds: number;
  metadata: Record<string, string>;
  envVars: Record<string, string>;
  egress: EgressPolicy;
  ingress: IngressPolicy;
  autoPause: boolean;
  autoPauseMemory: boolean;
  autoResume: boolean;
  runtime?: RuntimeName;
  /** Volumes to bind, resolved and checked (see Volumes.resolveMounts). */
  volumeMounts?: VolumeMount[];
  /** Workload identity tokens to register, checked (see identityTokensOf). */
  identityTokens?: IdentityTokens;
  /** Refuse (a `quota` error) when the team already has this many starting or running. */
  maxLivePerTeam?: number;
  /** Counted already, as one of a hold's creates (a fork's): no quota check of its own. */
  quotaHold?: QuotaHold;
  /** A create sent by a cluster's api: the sandbox lives only while the api has not called it off. */
  ticket?: CreateTicket;
}

/**
 * An api's hold on the create it sent (store/create-tickets.ts): claimed before the sandbox's
 * first record, confirmed once it runs; either throws when the api called the create off
 * (it lost the answer), and the sandbox is ended as a failed create is.
 */
export interface CreateTicket {
  claim(sandboxId: string): Promise<void>;
  confirm(sandboxId: string): Promise<void>;
}

/**
 * Creates counted against a team's quota before they have a record: each is let go once its
 * sandbox is on record (it counts as live from then on) or will not be.
 */
export class QuotaHold {
  constructor(
    private left: number,
    private readonly give: (n: number) => void,
  ) {}

  /** One of the held creates is on record now, or failed. */
  releaseOne(): void {
    if (this.left === 0) return;
    this.left--;
    this.give(1);
  }

  /** The creates not made (a fork that ended early): uncounted all at once. */
  releaseAll(): void {
    if (this.left === 0) return;
    this.give(this.left);
    this.left = 0;
  }
}

/**
 * A team's live sandboxes plus its creates still waiting for a sandbox (they have no record
 * yet): checked and counted under one lock, so concurrent creates cannot overshoot the quota.
 */
export class TeamQuota {
  private readonly lock = new KeyedLock();
  private readonly pending = new Map<string, number>();

  /** Counts one create against the team's limit; the returned release uncounts it. */
  async reserve(ctx: OrchestratorContext, teamId: string, limit: number | undefined): Promise<() => void> {
    const hold = await this.hold(ctx, teamId, limit, 1);
    return () => hold.releaseOne();
  }

  /** Counts `count` creates against the team's limit at once: all of them fit, or none is counted. */
  async hold(
    ctx: OrchestratorContext,
    teamId: string,
    limit: number | undefined,
    count: number,
  ): Promise<QuotaHold> {
    await this.lock.run(teamId, async () => {
      const pending = this.pending.get(teamId) ?? 0;
      if (limit === undefined) return void this.pending.set(teamId, pending + count);
      const live = (await ctx.store.sandboxes.countLive(teamId)) + pending;
      if (live + count > limit) {
        throw quotaExceeded(
          count === 1
            ? `your team already runs ${limit} sandboxes, the most it may: kill one first`
            : `your team runs ${live} sandboxes and may run ${limit}: ${count} more would pass it; kill ${live + count - limit} first, or ask for fewer`,
          5,
        );
      }
      this.pending.set(teamId, pending + count);
    });
    return new QuotaHold(count, (n) => {
      const left = (this.pending.get(teamId) ?? n) - n;
      if (left > 0) this.pending.set(teamId, left);
      else this.pending.delete(teamId);
    });
  }
}

/**
 * Creates a sandbox: counted against the team's quota, then given a warm pool member (a ready
 * one, or the next to boot; see WarmPool) unless it continues a memory snapshot, on record from
 * then on (a crash afterwards is cleaned up as a sandbox that was starting), and started: the
 * member takes the sandbox's identity, or the memory image is restored.
 */
export async function createSandbox(
  ctx: OrchestratorContext,
  quota: TeamQuota,
  req: CreateSandboxRequest,
  poolKey: (template: Template, build: Build, runtime: RuntimeName) => PoolKey,
): Promise<Sandbox> {
  const span = spans(ctx.log, "sandbox created");
  const memory = memoryImageOf(req.build);
  // a memory snapshot continues under the runtime that wrote it, unless another is asked for
  const runtime = req.runtime ?? memory?.runtime ?? ctx.defaultRuntime;
  const restoreMemory = memory?.runtime === runtime ? memory : undefined;
  const hold = req.quotaHold ?? (await quota.hold(ctx, req.team.id, req.maxLivePerTeam, 1));
  const release = () => hold.releaseOne();
  let member: PoolMember | undefined;
  let sandbox: Sandbox;
  try {
    // a pool member's mounts were fixed when it booted: a sandbox with volumes boots its own
    const cold = !restoreMemory && (req.volumeMounts?.length ?? 0) > 0;
    if (!restoreMemory && !cold) member = await ctx.pool.take(poolKey(req.template, req.build, runtime));
    span.mark(member?.fromStock ? "pool" : "boot");
    const now = new Date();
    sandbox = {
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
      // a private sandbox's URLs need their own token; each fork gets its own
      ...(req.ingress.allowPublicTraffic ? {} : { trafficAccessToken: newSecret() }),
      egress: req.egress,
      ingress: req.ingress,
      autoPause: req.autoPause,
      autoPauseMemory: req.autoPauseMemory,
      autoResume: req.autoResume,
      volumeMounts: req.volumeMounts ?? [],
      ...(req.identityTokens && Object.keys(req.identityTokens).length > 0
        ? { identityTokens: req.identityTokens }
        : {}),
    };
  } catch (err) {
    release();
    if (member) await ctx.host.destroy(member).finally(() => ctx.pool.handedOver(member!));
    throw err;
  }
  // on record under its lock: an operation on it waits until its start has ended (lifecycle.ts)
  return ctx.lock.run(sandbox.id, async () => {
    try {
      // beyond one machine: the api's ticket is claimed before the first record (create-tickets.ts)
      await req.ticket?.claim(sandbox.id);
      await ctx.store.sandboxes.insert(sandbox);
    } catch (err) {
      if (member) await ctx.host.destroy(member).finally(() => ctx.pool.handedOver(member!));
      throw err;
    } finally {
      release();
    }
    if (member) await ctx.pool.handedOver(member);
    span.mark("record");
    try {
      const address = member
        ? await firstStart(ctx, sandbox, req.build, { member })
        : await ctx.budget.run(
            () => firstStart(ctx, sandbox, req.build, restoreMemory ? { memory: restoreMemory } : "cold"),
            { urgent: true },
          );
      span.mark(restoreMemory ? "restore" : member ? "handover" : "cold boot");
      crashPoint("create:started");
      ctx.live.serve(sandbox.id, address, sandbox);
      sandbox.state = "running";
      await ctx.store.sandboxes.update(sandbox.id, { state: "running" });
      // last: a create called off before this point is ended here, below
      await req.ticket?.confirm(sandbox.id);
      await ctx.store.templates.recordSpawn(req.template.id);
      await ctx.store.events.record("sandbox.created", {
        teamId: sandbox.teamId,
        sandboxId: sandbox.id,
        data: { templateId: sandbox.templateId, runtime: sandbox.runtime },
      });
      ctx.armDeadline(sandbox);
      span.mark("record");
      span.end({ sandboxId: sandbox.id, runtime, pooled: member?.fromStock ?? false });
      return sandbox;
    } catch (err) {
      ctx.log.error({ sandboxId: sandbox.id, err }, "sandbox failed to start");
      ctx.live.delete(sandbox.id);
      await ctx.host.destroy(sandbox).catch(() => undefined);
      await ctx.store.sandboxes.update(sandbox.id, { state: "killed", killedAt: nowIso() });
      await ctx.store.events.record("sandbox.failed", {
        teamId: sandbox.teamId,
        sandboxId: sandbox.id,
        data: { reason: `it failed to start: ${briefly(err)}` },
      });
      throw err;
    }
  });
}
