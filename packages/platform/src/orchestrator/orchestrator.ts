import path from "node:path";
import type { RuntimeName } from "../runtime/container-runtime.js";
import { newSandboxId, newSecret, nowIso } from "../store/ids.js";
import type { BuildRow, SandboxRow, Store, Team, TemplateRow } from "../store/index.js";
import { type MemoryImage, memoryImageOf } from "../templates/build-spec.js";
import { runCommand } from "../templates/envd-exec.js";
import { checkpointable } from "./checkpointable.js";
import { KeyedLock } from "./keyed-lock.js";
import type { BootSpec, SandboxHost } from "./sandbox-host.js";
import { initEnvd, startTemplateCommand } from "./sandbox-init.js";
import type { PoolMember, WarmPool } from "./warm-pool.js";

export type PauseKind = "frozen" | "checkpointed" | "stopped";

export interface CreateSandboxRequest {
  team: Team;
  template: TemplateRow;
  build: BuildRow;
  alias?: string;
  timeoutSeconds: number;
  metadata: Record<string, string>;
  envVars: Record<string, string>;
  allowInternet: boolean;
  autoPause: boolean;
  autoResume: boolean;
  runtime?: RuntimeName;
  /** Refuse (SandboxQuotaExceeded) when the team already has this many starting or running. */
  maxLivePerTeam?: number;
}

export interface OrchestratorOptions {
  store: Store;
  host: SandboxHost;
  dataDir: string;
  defaultRuntime: RuntimeName;
  /** A frozen sandbox older than this is checkpointed (or stopped) to free its memory. */
  deepPauseAfterMs: number;
  log(level: "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>): void;
  /** Ready sandboxes to hand out instead of booting; none when unset. */
  pool?: WarmPool;
  /** Called when a sandbox stops serving (kill, pause), to cut its open connections. */
  onUnavailable?(sandboxId: string): void;
}

/** Where the proxy should send a sandbox's traffic (the proxy's SandboxLocation). */
export type Route =
  | { state: "running"; address: string }
  | { state: "paused"; autoResume: boolean }
  | undefined;

interface Live {
  /** Set while the sandbox serves: the proxy routes here. */
  address?: string;
  /** A frozen sandbox's address: its network stays as it was, so resume needs no lookup. */
  frozenAddress?: string;
  timer?: NodeJS.Timeout;
  deepPauseTimer?: NodeJS.Timeout;
}

export class SandboxNotFound extends Error {
  constructor(id: string) {
    super(`sandbox ${id} not found`);
    this.name = "SandboxNotFound";
  }
}

export class SandboxQuotaExceeded extends Error {
  constructor(readonly limit: number) {
    super(`your team already runs ${limit} sandboxes, the most it may: kill one first`);
    this.name = "SandboxQuotaExceeded";
  }
}

export class SandboxStateConflict extends Error {
  constructor(message: string) {
    super(message);
    this.name = "SandboxStateConflict";
  }
}

/**
 * The life of sandboxes: create, timeouts, pause at three depths, resume, kill, and adoption
 * of what was running when the platform process restarts. The store is the record; the host
 * holds the live parts.
 */
export class Orchestrator {
  private readonly live = new Map<string, Live>();
  private readonly lock = new KeyedLock();
  /** Serialises a team's quota check with its insert, so concurrent creates cannot overshoot. */
  private readonly teamLock = new KeyedLock();

  constructor(private readonly o: OrchestratorOptions) {}

  private bootSpec(row: SandboxRow, build: BuildRow): BootSpec {
    return {
      ...this.buildBootSpec(build, row.id, row.runtime, row.envd_access_token),
      cpuCount: row.cpu_count,
      memoryMB: row.memory_mb,
      diskSizeMB: row.disk_size_mb,
      internet: row.allow_internet === 1,
    };
  }

  /** How a sandbox of `build` boots, before a create's own settings (a warm pool member's spec). */
  private buildBootSpec(build: BuildRow, id: string, runtime: RuntimeName, accessToken: string): BootSpec {
    const layers = JSON.parse(build.layers ?? "[]") as string[];
    const spec = JSON.parse(build.spec) as { user?: string; workdir?: string };
    return {
      id,
      runtime,
      lowers: layers.map((l) => path.resolve(this.o.dataDir, l)),
      cpuCount: build.cpu_count,
      memoryMB: build.memory_mb,
      diskSizeMB: build.disk_size_mb,
      // on by default as in a create; a claim that wants it off turns it off
      internet: true,
      envdAccessToken: accessToken,
      defaultUser: spec.user ?? "user",
      defaultWorkdir: spec.workdir,
    };
  }

  /** Keeps sandboxes of this build ready in the warm pool (when there is one). */
  keepWarm(templateId: string, build: BuildRow, runtime: RuntimeName = this.o.defaultRuntime): void {
    this.o.pool?.want({
      templateId,
      buildId: build.id,
      runtime,
      specFor: (id, token) => this.buildBootSpec(build, id, runtime, token),
    });
  }

  private async buildOf(row: SandboxRow): Promise<BuildRow> {
    const build = await this.o.store.templates.getBuild(row.build_id);
    if (!build) throw new Error(`build ${row.build_id} of sandbox ${row.id} is gone`);
    return build;
  }

  private arm(row: SandboxRow): void {
    const live = this.live.get(row.id) ?? {};
    this.live.set(row.id, live);
    clearTimeout(live.timer);
    const ms = Math.max(0, Date.parse(row.end_at) - Date.now());
    // setTimeout holds at most ~24.8 days; longer timeouts re-arm when they fire
    live.timer = setTimeout(() => void this.onTimeout(row.id), Math.min(ms, 2 ** 31 - 1));
    live.timer.unref();
  }

  private async onTimeout(id: string): Promise<void> {
    const row = await this.o.store.sandboxes.get(id);
    if (!row || row.state === "killed") return;
    if (Date.parse(row.end_at) > Date.now() + 1000) return this.arm(row);
    try {
      if (row.auto_pause && row.state === "running") await this.pause(id);
      else if (row.state !== "paused") await this.kill(id);
    } catch (err) {
      this.o.log("error", "timeout action failed", { sandboxId: id, err: String(err) });
    }
  }

  async create(req: CreateSandboxRequest): Promise<SandboxRow> {
    const now = new Date();
    const spec = JSON.parse(req.build.spec) as { envVars?: Record<string, string> };
    const memory = memoryImageOf(req.build);
    // a memory snapshot continues under the runtime that wrote it, unless another is asked for
    const runtime = req.runtime ?? memory?.runtime ?? this.o.defaultRuntime;
    const restoreMemory = memory?.runtime === runtime ? memory : undefined;
    const member = restoreMemory ? undefined : this.o.pool?.claim(req.build.id, runtime);
    const row: SandboxRow = {
      id: member?.id ?? newSandboxId(),
      team_id: req.team.id,
      template_id: req.template.id,
      build_id: req.build.id,
      alias: req.alias ?? null,
      state: "starting",
      pause_kind: null,
      runtime,
      started_at: nowIso(now),
      end_at: nowIso(new Date(now.getTime() + req.timeoutSeconds * 1000)),
      cpu_count: req.build.cpu_count,
      memory_mb: req.build.memory_mb,
      disk_size_mb: req.build.disk_size_mb,
      metadata: JSON.stringify(req.metadata),
      env_vars: JSON.stringify({ ...spec.envVars, ...req.envVars }),
      envd_access_token: newSecret(),
      allow_internet: req.allowInternet ? 1 : 0,
      auto_pause: req.autoPause ? 1 : 0,
      auto_resume: req.autoResume ? 1 : 0,
      placement: null,
      killed_at: null,
    };
    try {
      await this.teamLock.run(req.team.id, async () => {
        const limit = req.maxLivePerTeam;
        if (limit !== undefined && (await this.o.store.sandboxes.countLive(req.team.id)) >= limit) {
          throw new SandboxQuotaExceeded(limit);
        }
        await this.o.store.sandboxes.insert(row);
      });
    } catch (err) {
      if (member) await this.o.host.destroy(member).finally(() => this.o.pool?.handedOver(member));
      throw err;
    }
    // on record now: a crash from here on is cleaned up as a sandbox that was starting
    if (member) await this.o.pool?.handedOver(member);
    return this.lock.run(row.id, async () => {
      try {
        let address: string;
        if (restoreMemory) {
          address = await this.restoreSnapshot(row, req.build, restoreMemory);
        } else {
          address = member ? await this.handOver(member, row) : await this.coldBoot(row, req.build);
          await startTemplateCommand(row, address, req.build);
        }
        this.live.set(row.id, { address });
        row.state = "running";
        await this.o.store.sandboxes.update(row.id, { state: "running" });
        await this.o.store.templates.recordSpawn(req.template.id);
        await this.o.store.events.record("sandbox.created", {
          teamId: row.team_id,
          sandboxId: row.id,
          data: { templateId: row.template_id, runtime: row.runtime },
        });
        this.arm(row);
        if (!restoreMemory) this.keepWarm(req.template.id, req.build, runtime);
        return row;
      } catch (err) {
        this.o.log("error", "sandbox failed to start", { sandboxId: row.id, err: String(err) });
        await this.o.host.destroy({ id: row.id, runtime: row.runtime }).catch(() => undefined);
        await this.o.store.sandboxes.update(row.id, { state: "killed", killed_at: nowIso() });
        throw err;
      }
    });
  }

  private async coldBoot(row: SandboxRow, build: BuildRow): Promise<string> {
    const address = await this.o.host.boot(this.bootSpec(row, build));
    await initEnvd(row, address);
    return address;
  }

  /**
   * Starts a sandbox from a memory snapshot: the image's processes continue (the start command
   * is not run again), and envd is handed the sandbox's own token and environment through the
   * token in the image's memory. Boots from the snapshot's files when the image cannot be used.
   */
  private async restoreSnapshot(row: SandboxRow, build: BuildRow, memory: MemoryImage): Promise<string> {
    const image = path.resolve(this.o.dataDir, memory.image);
    try {
      const address = await this.o.host.bootFromImage(this.bootSpec(row, build), image);
      // a restored envd has just re-opened its listener: a first connection can still be cut
      for (let attempt = 1; ; attempt++) {
        try {
          await initEnvd(row, address, memory.accessToken);
          return address;
        } catch (err) {
          if (attempt >= 3) throw err;
          this.o.log("warn", "envd /init after a restore failed, retrying", {
            sandboxId: row.id,
            err: String(err),
          });
          await new Promise((r) => setTimeout(r, 100 * attempt));
        }
      }
    } catch (err) {
      this.o.log("warn", "memory snapshot could not be restored, booting from its files", {
        sandboxId: row.id,
        err: String(err),
      });
      await this.o.host.destroy(row);
      const address = await this.coldBoot(row, build);
      await startTemplateCommand(row, address, build);
      return address;
    }
  }

  /**
   * Gives a warm pool member the sandbox's identity: its own envd token (replacing the pool's)
   * and environment variables through /init, and its internet setting. A member that does not
   * take it is replaced by a cold boot under the same id.
   */
  private async handOver(member: PoolMember, row: SandboxRow): Promise<string> {
    try {
      if (row.allow_internet !== 1) await this.o.host.setInternet(row.id, false);
      await initEnvd(row, member.address, member.accessToken);
      return member.address;
    } catch (err) {
      this.o.log("warn", "warm pool member did not take its sandbox, booting one", {
        sandboxId: row.id,
        err: String(err),
      });
      await this.o.host.destroy(member);
      return this.coldBoot(row, await this.buildOf(row));
    }
  }

  /**
   * Runs `fn` on the sandbox's state while it cannot change (for snapshots). With `memory`,
   * under gVisor, a running sandbox is checkpointed first (envd quiesced, memory to disk) and
   * `fn` gets the memory image too; the sandbox is restored afterwards and its processes go on.
   * Otherwise, or when the checkpoint is refused (the sandbox's own processes listen), a
   * running sandbox is synced (gVisor holds written data in its own memory until then) and
   * frozen for the duration; a paused one is still already (with its image when checkpointed).
   */
  async withStateStill<T>(
    id: string,
    opts: { memory: boolean },
    fn: (state: { upper: string; row: SandboxRow; memoryImage?: string }) => Promise<T>,
  ): Promise<T> {
    return this.lock.run(id, async () => {
      const row = await this.o.store.sandboxes.get(id);
      if (!row || row.state === "killed") throw new SandboxNotFound(id);
      if (row.state === "starting") throw new SandboxStateConflict(`sandbox ${id} is still starting`);
      const upper = await this.o.host.mountFiles(id);
      const image = this.o.host.paths(id).checkpoint;
      if (row.state !== "running") {
        return fn({
          upper,
          row,
          memoryImage: opts.memory && row.pause_kind === "checkpointed" ? image : undefined,
        });
      }
      const ref = { id, runtime: row.runtime };
      const envd = { address: this.live.get(id)?.address ?? "", accessToken: row.envd_access_token };
      if (opts.memory && this.o.host.canCheckpoint(row.runtime) && (await checkpointable(envd))) {
        this.o.onUnavailable?.(id);
        const checkpointed = await this.o.host.checkpoint(ref).then(
          () => true,
          (err: unknown) => {
            this.o.log("warn", "cannot checkpoint for a memory snapshot, keeping files only", {
              sandboxId: id,
              err: String(err),
            });
            return false;
          },
        );
        if (checkpointed) {
          try {
            return await fn({ upper, row, memoryImage: image });
          } finally {
            await this.bringBack(row);
          }
        }
        // this gVisor can take the sandbox down with a refused checkpoint: boot it from its files
        if (!(await this.o.host.answers(envd.address))) {
          await this.bootAgain(row);
          envd.address = this.live.get(id)?.address ?? "";
        }
      }
      const sync = { cmd: "sync", user: "root" };
      if (envd.address) await runCommand(envd, sync);
      await this.o.host.freeze(ref);
      try {
        return await fn({ upper, row });
      } finally {
        await this.o.host.thaw(ref);
      }
    });
  }

  /**
   * Restores a sandbox checkpointed for a snapshot; boots it from its files when there is no
   * image or the restore fails (its processes are lost then, its files are not).
   */
  private async bringBack(row: SandboxRow): Promise<void> {
    try {
      const live = this.live.get(row.id) ?? {};
      this.live.set(row.id, live);
      live.address = await this.o.host.restore(this.bootSpec(row, await this.buildOf(row)));
    } catch (err) {
      this.o.log("error", "restore after a snapshot failed, booting from files", {
        sandboxId: row.id,
        err: String(err),
      });
      await this.bootAgain(row);
    }
  }

  /** Boots a sandbox whose container is gone from its files; its processes are lost. */
  private async bootAgain(row: SandboxRow): Promise<void> {
    const spec = this.bootSpec(row, await this.buildOf(row));
    const live = this.live.get(row.id) ?? {};
    this.live.set(row.id, live);
    await this.o.host.stop(spec).catch(() => undefined);
    live.address = await this.o.host.boot(spec);
    await initEnvd(row, live.address);
  }

  async get(id: string): Promise<SandboxRow | undefined> {
    return this.o.store.sandboxes.get(id);
  }

  async kill(id: string): Promise<void> {
    await this.lock.run(id, async () => {
      const row = await this.o.store.sandboxes.get(id);
      if (!row || row.state === "killed") throw new SandboxNotFound(id);
      const live = this.live.get(id);
      clearTimeout(live?.timer);
      clearTimeout(live?.deepPauseTimer);
      this.live.delete(id);
      this.o.onUnavailable?.(id);
      await this.o.host.destroy({ id, runtime: row.runtime });
      await this.o.store.sandboxes.update(id, { state: "killed", killed_at: nowIso() });
      await this.o.store.events.record("sandbox.killed", { teamId: row.team_id, sandboxId: id });
    });
  }

  /**
   * Pauses a running sandbox. Frozen by default (memory kept in RAM, deepened later: see
   * deepPause); `checkpointed` or `stopped` go deeper at once, e.g. when the caller does not
   * need the memory kept (`memory: false` on the API).
   */
  async pause(id: string, depth: PauseKind = "frozen"): Promise<PauseKind> {
    return this.lock.run(id, async (): Promise<PauseKind> => {
      const row = await this.o.store.sandboxes.get(id);
      if (!row || row.state === "killed") throw new SandboxNotFound(id);
      if (row.state === "paused") throw new SandboxStateConflict(`sandbox ${id} is already paused`);
      // the proxy stops routing here before the sandbox stops answering
      const live = this.live.get(id) ?? {};
      this.live.set(id, live);
      live.frozenAddress = live.address;
      live.address = undefined;
      this.o.onUnavailable?.(id);
      try {
        await this.o.host.freeze({ id, runtime: row.runtime });
      } catch (err) {
        live.address = live.frozenAddress;
        throw err;
      }
      clearTimeout(live.timer);
      await this.o.store.sandboxes.update(id, { state: "paused", pause_kind: "frozen" });
      await this.o.store.events.record("sandbox.paused", {
        teamId: row.team_id,
        sandboxId: id,
        data: { kind: "frozen" },
      });
      if (depth !== "frozen") return this.deepen(row, depth);
      live.deepPauseTimer = setTimeout(() => void this.deepPause(id), this.o.deepPauseAfterMs);
      live.deepPauseTimer.unref();
      return "frozen";
    });
  }

  /**
   * Moves a frozen sandbox out of memory: a checkpoint where the runtime can (gVisor, and only
   * while the sandbox's own processes hold no listening sockets), otherwise a stop that keeps
   * its files.
   */
  async deepPause(id: string): Promise<PauseKind | undefined> {
    return this.lock.run(id, async () => {
      const row = await this.o.store.sandboxes.get(id);
      if (row?.state !== "paused" || row.pause_kind !== "frozen") return undefined;
      return this.deepen(row, "checkpointed");
    });
  }

  /** Frozen → checkpointed (when wanted and possible) or stopped. Runs under the sandbox's lock. */
  private async deepen(row: SandboxRow, want: "checkpointed" | "stopped"): Promise<PauseKind> {
    const spec = { id: row.id, runtime: row.runtime };
    await this.o.host.thaw(spec);
    let kind: PauseKind = "stopped";
    if (want === "checkpointed" && this.o.host.canCheckpoint(row.runtime)) {
      try {
        await this.o.host.checkpoint(spec);
        kind = "checkpointed";
      } catch (err) {
        this.o.log("warn", "checkpoint failed, stopping instead", { sandboxId: row.id, err: String(err) });
      }
    }
    if (kind === "stopped") await this.o.host.stop(spec);
    const live = this.live.get(row.id);
    if (live) {
      live.address = undefined;
      live.frozenAddress = undefined;
      clearTimeout(live.deepPauseTimer);
    }
    await this.o.store.sandboxes.update(row.id, { pause_kind: kind });
    await this.o.store.events.record("sandbox.paused", {
      teamId: row.team_id,
      sandboxId: row.id,
      data: { kind },
    });
    return kind;
  }

  /** Resumes a paused sandbox (no-op when running). Returns whether it was paused. */
  async resume(id: string, timeoutSeconds?: number): Promise<{ row: SandboxRow; resumed: boolean }> {
    return this.lock.run(id, async () => {
      const row = await this.o.store.sandboxes.get(id);
      if (!row || row.state === "killed") throw new SandboxNotFound(id);
      const endAt =
        timeoutSeconds === undefined ? undefined : nowIso(new Date(Date.now() + timeoutSeconds * 1000));
      if (row.state !== "paused") {
        if (endAt && endAt > row.end_at) {
          row.end_at = endAt;
          await this.o.store.sandboxes.update(id, { end_at: endAt });
          this.arm(row);
        }
        return { row, resumed: false };
      }
      const live = this.live.get(id) ?? {};
      clearTimeout(live.deepPauseTimer);
      if (row.pause_kind === "frozen") {
        await this.o.host.thaw({ id, runtime: row.runtime });
        live.address = live.frozenAddress ?? (await this.o.host.address(id));
        live.frozenAddress = undefined;
      } else {
        const spec = this.bootSpec(row, await this.buildOf(row));
        live.address =
          row.pause_kind === "checkpointed" ? await this.o.host.restore(spec) : await this.o.host.boot(spec);
        if (row.pause_kind === "stopped") await initEnvd(row, live.address);
      }
      this.live.set(id, live);
      row.state = "running";
      row.pause_kind = null;
      row.end_at = endAt ?? nowIso(new Date(Date.now() + 300_000));
      await this.o.store.sandboxes.update(id, { state: "running", pause_kind: null, end_at: row.end_at });
      await this.o.store.events.record("sandbox.resumed", { teamId: row.team_id, sandboxId: id });
      this.arm(row);
      return { row, resumed: true };
    });
  }

  async setTimeout(id: string, seconds: number): Promise<void> {
    await this.lock.run(id, async () => {
      const row = await this.o.store.sandboxes.get(id);
      if (!row || row.state === "killed") throw new SandboxNotFound(id);
      row.end_at = nowIso(new Date(Date.now() + seconds * 1000));
      await this.o.store.sandboxes.update(id, { end_at: row.end_at });
      if (row.state === "running") this.arm(row);
    });
  }

  /** Turns outbound internet on or off: at once when the sandbox has a network, and for every later boot. */
  async setInternet(id: string, allowed: boolean): Promise<void> {
    await this.lock.run(id, async () => {
      const row = await this.o.store.sandboxes.get(id);
      if (!row || row.state === "killed") throw new SandboxNotFound(id);
      if (row.state !== "running") {
        throw new SandboxStateConflict(
          `sandbox ${id} is ${row.state}: resume it before changing its network`,
        );
      }
      await this.o.host.setInternet(id, allowed);
      await this.o.store.sandboxes.update(id, { allow_internet: allowed ? 1 : 0 });
      await this.o.store.events.record("sandbox.network_updated", {
        teamId: row.team_id,
        sandboxId: id,
        data: { internet: allowed },
      });
    });
  }

  /** For the proxy: where a sandbox's traffic goes right now. */
  async route(id: string): Promise<Route> {
    const live = this.live.get(id);
    if (live?.address) return { state: "running", address: live.address };
    const row = await this.o.store.sandboxes.get(id);
    if (!row || row.state === "killed" || row.state === "starting") return undefined;
    if (row.state === "paused") return { state: "paused", autoResume: row.auto_resume === 1 };
    return undefined;
  }

  /** Auto-resume on traffic: resumes a paused sandbox that asked for it, for the proxy. */
  async resumeOnTraffic(id: string): Promise<{ address: string } | undefined> {
    const row = await this.o.store.sandboxes.get(id);
    if (row?.state !== "paused" || row.auto_resume !== 1) return undefined;
    await this.resume(
      id,
      Math.max(60, Math.round((Date.parse(row.end_at) - Date.parse(row.started_at)) / 1000)),
    );
    const address = this.live.get(id)?.address;
    return address ? { address } : undefined;
  }

  /**
   * After a restart: running containers are adopted as they are; sandboxes whose container
   * is gone are recovered as stopped (files kept); leftovers nobody owns are removed.
   */
  async adopt(): Promise<void> {
    for (const row of await this.o.store.sandboxes.live()) {
      try {
        if (row.state === "starting") {
          await this.o.host.destroy({ id: row.id, runtime: row.runtime });
          await this.o.store.sandboxes.update(row.id, { state: "killed", killed_at: nowIso() });
          continue;
        }
        const status = await this.o.host.status(row);
        if (row.state === "running" && status === "running") {
          this.live.set(row.id, { address: await this.o.host.address(row.id) });
          this.arm(row);
        } else if (row.state === "paused" && row.pause_kind === "frozen" && status === "paused") {
          this.live.set(row.id, {});
          const live = this.live.get(row.id)!;
          live.deepPauseTimer = setTimeout(() => void this.deepPause(row.id), this.o.deepPauseAfterMs);
          live.deepPauseTimer.unref();
        } else if (row.state === "paused" && row.pause_kind !== "frozen") {
          this.live.set(row.id, {});
        } else {
          await this.o.host.stop({ id: row.id, runtime: row.runtime });
          await this.o.store.sandboxes.update(row.id, { state: "paused", pause_kind: "stopped" });
          await this.o.store.events.record("sandbox.recovered", { teamId: row.team_id, sandboxId: row.id });
          this.live.set(row.id, {});
        }
      } catch (err) {
        this.o.log("error", "could not adopt sandbox", { sandboxId: row.id, err: String(err) });
      }
    }
  }

  /** Ids the orchestrator is responsible for (for sweeping leftovers). */
  knownIds(): Set<string> {
    return new Set(this.live.keys());
  }

  /** Stops timers; sandboxes keep running for the next platform process to adopt. */
  detach(): void {
    for (const live of this.live.values()) {
      clearTimeout(live.timer);
      clearTimeout(live.deepPauseTimer);
    }
  }
}
