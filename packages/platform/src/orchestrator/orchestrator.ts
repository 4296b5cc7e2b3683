import { nowIso } from "../lib/ids.js";
import { KeyedLock } from "../lib/keyed-lock.js";
import { type EgressPolicy, withoutProxyPassword } from "../model/network.js";
import type { PauseKind, RuntimeName, Sandbox } from "../model/sandbox.js";
import { type Build, runtimeSpecOf, type Template } from "../model/template.js";
import type { KillReason } from "../model/webhook.js";
import { adoptSandboxes, reconcileLost } from "./adopt.js";
import { buildBootSpec } from "./boot-spec.js";
import type { OrchestratorContext, OrchestratorOptions } from "./context.js";
import { type CreateSandboxRequest, createSandbox, type QuotaHold, TeamQuota } from "./create.js";
import { checkSandbox, HealthWatch } from "./health.js";
import { decide, decideOn, lifeStateOf, transition, unhandled } from "./lifecycle.js";
import { accessOf, LiveSandboxes, type SandboxAccess } from "./live.js";
import { deepPause, pauseSandbox, resumeSandbox } from "./pause.js";
import { startTemplateCommand } from "./start-command.js";
import { type StillState, withStateStill } from "./still.js";
import type { PoolKey, PoolMember } from "./warm-pool.js";

export type { OrchestratorOptions } from "./context.js";
export type { CreateSandboxRequest, QuotaHold } from "./create.js";
export type { StillState } from "./still.js";

/** Where the proxy should send a sandbox's traffic (the proxy's SandboxLocation). */
export type Route =
  | { state: "running"; address: string; access: SandboxAccess }
  | { state: "paused"; autoResume: boolean; access: SandboxAccess }
  | { state: "error"; reason: string }
  | undefined;

/**
 * The life of sandboxes on this host: create, timeouts, pause at three depths, resume, kill,
 * snapshots' still state, and adoption of what was running when the platform process
 * restarts. The store is the record; the live side (addresses, timers) is kept here, the
 * containers by the sandbox host. The steps themselves live beside this file: create.ts,
 * boot.ts, pause.ts, still.ts, adopt.ts.
 */
export class Orchestrator {
  private readonly ctx: OrchestratorContext;
  private readonly quota = new TeamQuota();
  private readonly health: HealthWatch;
  /** Adopted while the platform did not answer yet: `lost` in the catalog until nowServing(). */
  private readonly awaitingService = new Set<string>();

  constructor(o: OrchestratorOptions) {
    this.ctx = {
      ...o,
      live: new LiveSandboxes(),
      lock: new KeyedLock(),
      armDeadline: (sandbox) => this.armDeadline(sandbox),
      armDeepPause: (id) => this.armDeepPause(id),
    };
    this.health = new HealthWatch(this.ctx);
  }

  /** Keeps sandboxes of this build ready in the warm pool (when it keeps any). */
  keepWarm(
    template: Pick<Template, "id" | "teamId" | "warmPool">,
    build: Build,
    runtime: RuntimeName = this.ctx.defaultRuntime,
  ): void {
    this.ctx.pool.want(this.poolKey(template, build, runtime));
  }

  private poolKey(
    template: Pick<Template, "id" | "teamId" | "warmPool">,
    build: Build,
    runtime: RuntimeName,
  ): PoolKey {
    return {
      templateId: template.id,
      teamId: template.teamId,
      buildId: build.id,
      runtime,
      limits: template.warmPool,
      specFor: (id, token) => buildBootSpec(this.ctx.dataDir, build, id, runtime, token),
      ...(runtimeSpecOf(build).startCmd
        ? {
            prepare: (member: PoolMember) =>
              startTemplateCommand(
                this.ctx.host.agent,
                member.address,
                member.accessToken,
                build,
                // a member has had no /init: the egress CA's trust settings go with the command
                this.ctx.host.sandboxEnv,
              ),
          }
        : {}),
    };
  }

  create(req: CreateSandboxRequest): Promise<Sandbox> {
    return createSandbox(this.ctx, this.quota, req, (template, build, runtime) =>
      this.poolKey(template, build, runtime),
    );
  }

  /**
   * Counts `count` creates of the team against `maxLive` before any is made (a fork's): a
   * `quota` error when they do not all fit. Each create given the hold (`quotaHold`) uses one;
   * what is left must be let go (`releaseAll`).
   */
  holdQuota(teamId: string, count: number, maxLive = this.ctx.maxLivePerTeam): Promise<QuotaHold> {
    return this.quota.hold(this.ctx, teamId, maxLive, count);
  }

  get(id: string): Promise<Sandbox | undefined> {
    return this.ctx.store.sandboxes.get(id);
  }

  /** Kills the sandbox; its `sandbox.killed` event says why (`reason`). */
  kill(id: string, reason: KillReason = "request"): Promise<void> {
    return this.ctx.lock.run(id, async () => {
      const decision = await decideOn(this.ctx, id, "kill");
      if (decision.to !== "killed") throw unhandled("kill", decision);
      const { sandbox } = decision;
      // no longer served from here either (a node marked lost while it still runs its sandboxes)
      this.ctx.live.delete(id);
      this.ctx.onUnavailable?.(id);
      if (decision.state === "lost") {
        // its node is gone: forgotten here; the node, back, removes what is left of it (its sweep)
        await this.ctx.store.sandboxes.update(id, { state: "killed", killedAt: nowIso() });
        await this.ctx.store.events.record("sandbox.killed", {
          teamId: sandbox.teamId,
          sandboxId: id,
          data: { reason },
        });
        return;
      }
      await this.ctx.host.destroy(sandbox);
      await this.ctx.store.sandboxes.update(id, { state: "killed", killedAt: nowIso() });
      await this.ctx.store.events.record("sandbox.killed", {
        teamId: sandbox.teamId,
        sandboxId: id,
        data: { reason },
      });
    });
  }

  pause(id: string, depth: PauseKind = "frozen"): Promise<PauseKind> {
    return pauseSandbox(this.ctx, id, depth);
  }

  /** Checkpoints (or stops) a frozen sandbox now; undefined when it is not frozen. */
  deepPause(id: string): Promise<PauseKind | undefined> {
    return deepPause(this.ctx, id);
  }

  /**
   * Resumes a paused sandbox. `connect` (the default) takes a running one too and gives it the
   * longer of its timeouts; `resume` refuses it (409), as E2B's resume does. `maxLive` is the
   * team's limit of live sandboxes (the platform's when not given).
   */
  resume(
    id: string,
    timeoutSeconds?: number,
    op: "resume" | "connect" = "connect",
    maxLive = this.ctx.maxLivePerTeam,
  ): Promise<{ sandbox: Sandbox; resumed: boolean }> {
    return resumeSandbox(this.ctx, id, op, timeoutSeconds, (teamId) =>
      this.quota.reserve(this.ctx, teamId, maxLive),
    );
  }

  withStateStill<T>(
    id: string,
    opts: { memory: boolean },
    fn: (state: StillState) => Promise<T>,
  ): Promise<T> {
    return withStateStill(this.ctx, id, opts, fn);
  }

  setTimeout(id: string, seconds: number): Promise<void> {
    return this.ctx.lock.run(id, async () => {
      const decision = await decideOn(this.ctx, id, "setTimeout");
      if (decision.to === "-") throw unhandled("setTimeout", decision);
      const { sandbox } = decision;
      sandbox.endAt = nowIso(new Date(Date.now() + seconds * 1000));
      await this.ctx.store.sandboxes.update(id, { endAt: sandbox.endAt });
      await this.ctx.store.events.record("sandbox.updated", {
        teamId: sandbox.teamId,
        sandboxId: id,
        data: { endAt: sandbox.endAt },
      });
      if (decision.to === "running") this.armDeadline(sandbox);
    });
  }

  /** Replaces a running sandbox's egress policy: at once, and for every later boot. */
  setEgress(id: string, egress: EgressPolicy): Promise<void> {
    return this.ctx.lock.run(id, async () => {
      const decision = await decideOn(this.ctx, id, "setNetwork");
      if (decision.to !== "running") throw unhandled("setNetwork", decision);
      const { sandbox } = decision;
      await this.ctx.host.setEgress(id, egress);
      await this.ctx.store.sandboxes.update(id, { egress });
      await this.ctx.store.events.record("sandbox.network_updated", {
        teamId: sandbox.teamId,
        sandboxId: id,
        // recorded for the events API: never the proxy's password
        data: { egress: withoutProxyPassword(egress) },
      });
    });
  }

  /** For the proxy: where a sandbox's traffic goes right now. */
  async route(id: string): Promise<Route> {
    const serving = this.ctx.live.route(id);
    if (serving) return { state: "running", ...serving };
    const sandbox = await this.ctx.store.sandboxes.get(id);
    if (sandbox?.state === "paused") {
      return { state: "paused", autoResume: sandbox.autoResume, access: accessOf(sandbox) };
    }
    if (sandbox?.state === "error") return { state: "error", reason: sandbox.reason ?? "it stopped working" };
    return undefined;
  }

  /** The sandboxes serving now (running). */
  *servingIds(): Iterable<string> {
    for (const [id] of this.ctx.live.serving()) yield id;
  }

  /** Looks at running sandboxes now and then, and marks those that stopped working (see health.ts). */
  watchHealth(): void {
    this.health.start();
  }

  /** Whether a sandbox stopped working, marking it so (for the proxy, when envd does not answer). */
  checkHealth(id: string): Promise<boolean> {
    return checkSandbox(this.ctx, id);
  }

  /** For the proxy: a signed file URL names no sandbox; the serving one whose envd token signed it. */
  signedBy(matches: (envdAccessToken: string) => boolean): string | undefined {
    for (const [id, live] of this.ctx.live.serving())
      if (live.accessToken && matches(live.accessToken)) return id;
    return undefined;
  }

  /** Auto-resume on traffic: resumes a paused sandbox that asked for it, for the proxy. */
  async resumeOnTraffic(id: string): Promise<{ address: string; access: SandboxAccess } | undefined> {
    const sandbox = await this.ctx.store.sandboxes.get(id);
    // only a sandbox created with autoResume wakes; the others stay paused (the proxy answers 502)
    if (!sandbox?.autoResume || transition(lifeStateOf(sandbox, this.ctx.store.nodeId), "wake") !== "running")
      return undefined;
    const lifetime = Math.round((Date.parse(sandbox.endAt) - Date.parse(sandbox.startedAt)) / 1000);
    await this.resume(id, Math.max(60, lifetime));
    return this.ctx.live.route(id);
  }

  /**
   * After a restart: adopts what still runs, recovers what does not (see adopt.ts). Sandboxes
   * that were `lost` stay so in the catalog until `nowServing()` when `serving` is false (a
   * node that does not answer yet), and are what they were at once otherwise.
   */
  async adopt(opts: { serving?: boolean } = {}): Promise<void> {
    const lost = await adoptSandboxes(this.ctx);
    if (opts.serving === false) for (const id of lost) this.awaitingService.add(id);
    else await reconcileLost(this.ctx, lost);
  }

  /** The platform answers now: sandboxes adopted while it did not are theirs again. */
  async nowServing(): Promise<void> {
    const ids = [...this.awaitingService];
    this.awaitingService.clear();
    await reconcileLost(this.ctx, ids);
  }

  /** Ids the orchestrator is responsible for (for sweeping leftovers). */
  knownIds(): Set<string> {
    return this.ctx.live.ids();
  }

  /** Kills every sandbox not yet killed (a platform closing for good); a failure is logged. */
  async killAll(): Promise<void> {
    for (const sandbox of await this.ctx.store.sandboxes.live()) {
      await this.kill(sandbox.id, "shutdown").catch((err: unknown) =>
        this.ctx.log.warn({ sandboxId: sandbox.id, err }, "kill on close failed"),
      );
    }
  }

  /** Whether any sandbox is left for the next platform process to adopt. */
  async anyLeft(): Promise<boolean> {
    return (await this.ctx.store.sandboxes.live()).length > 0;
  }

  /** Stops timers; sandboxes keep running for the next platform process to adopt. */
  detach(): void {
    this.health.stop();
    this.ctx.live.stopTimers();
  }

  /**
   * The sandbox's end of life, when its timer fires: killed, or paused when it asked for
   * autoPause (see lifecycle.ts); before its time, the timer is armed again. Never throws: a
   * failure is logged.
   */
  async expire(id: string): Promise<void> {
    const sandbox = await this.ctx.store.sandboxes.get(id);
    const op = sandbox?.autoPause ? "timeoutToPause" : "timeout";
    try {
      const decision = decide(op, id, sandbox, this.ctx.store.nodeId);
      if (decision.to === "-") return;
      if (Date.parse(decision.sandbox.endAt) > Date.now() + 1000) return this.armDeadline(decision.sandbox);
      await this.ctx.store.events.record("sandbox.timed_out", {
        teamId: decision.sandbox.teamId,
        sandboxId: id,
        data: { action: decision.to === "killed" ? "kill" : "pause" },
      });
      // the pause or kill looks the sandbox up again under its lock: another operation may be first
      if (decision.to === "killed") await this.kill(id, "timeout");
      else if (decision.to === "paused")
        await this.pause(id, sandbox?.autoPauseMemory ? "frozen" : "stopped");
      else if (decision.to === "stopped") await this.pause(id, "stopped");
      else throw unhandled(op, decision);
    } catch (err) {
      this.ctx.log.error({ sandboxId: id, err }, "timeout action failed");
    }
  }

  private armDeadline(sandbox: { id: string; endAt: string }): void {
    const live = this.ctx.live.of(sandbox.id);
    clearTimeout(live.endTimer);
    const ms = Math.max(0, Date.parse(sandbox.endAt) - Date.now());
    // setTimeout holds at most ~24.8 days; longer timeouts re-arm when they fire
    live.endTimer = setTimeout(() => void this.expire(sandbox.id), Math.min(ms, 2 ** 31 - 1));
    live.endTimer.unref();
  }

  private armDeepPause(id: string): void {
    const live = this.ctx.live.of(id);
    clearTimeout(live.deepPauseTimer);
    live.deepPauseTimer = setTimeout(() => void this.deepPause(id), this.ctx.deepPauseAfterMs);
    live.deepPauseTimer.unref();
  }
}
