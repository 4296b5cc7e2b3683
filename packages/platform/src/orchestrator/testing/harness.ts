import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { newSandboxId } from "../../lib/ids.js";
import { silentLogger } from "../../lib/log.js";
import { OPEN_EGRESS } from "../../model/network.js";
import type { RuntimeName, Sandbox } from "../../model/sandbox.js";
import type { Team } from "../../model/team.js";
import type { Build, Template } from "../../model/template.js";
import { openStore, type Store } from "../../store/index.js";
import { fakeSealer } from "../../store/testing/fake-sealer.js";
import { sandboxRecord } from "../../store/testing/sandbox-record.js";
import { BootBudget } from "../boot-budget.js";
import { type LifeState, lifeStateOf } from "../lifecycle.js";
import { type CreateSandboxRequest, Orchestrator } from "../orchestrator.js";
import { WarmPool } from "../warm-pool.js";
import { type Condition, FakeSandboxHost } from "./fake-host.js";

/** The host condition each state implies (undefined: no container, nothing on the host). */
export const CONDITION_OF: Partial<Record<LifeState, Condition>> = {
  running: "running",
  frozen: "frozen",
  checkpointed: "checkpointed",
  stopped: "stopped",
  error: "stopped",
};

/**
 * An orchestrator over a fake host and a real store (SQLite in a temp dir), with one team and
 * one template build: the lifecycle without root, sandboxes or a database server.
 */
export class LifecycleHarness {
  readonly host = new FakeSandboxHost();
  /** Replaced by restart(), as a new platform process would have its own. */
  orchestrator: Orchestrator;
  readonly pool: WarmPool;
  private readonly budget = new BootBudget({
    concurrent: 2,
    memoryReserveBytes: 0,
    availableMemory: async () => 1,
  });
  /** Ids the orchestrator was told stopped serving (its proxy connections are cut). */
  readonly unavailable: string[] = [];

  private constructor(
    readonly store: Store,
    private readonly dir: string,
    readonly team: Team,
    readonly template: Template,
    readonly build: Build,
    private readonly maxLivePerTeam?: number,
  ) {
    this.pool = new WarmPool({
      min: 0,
      max: 0,
      host: this.host,
      budget: this.budget,
      recordDir: path.join(dir, "pool"),
      log: silentLogger,
    });
    this.orchestrator = this.newOrchestrator();
  }

  /** The platform process starts again: a new orchestrator over the same store and host adopts. */
  async restart(): Promise<void> {
    this.orchestrator.detach();
    this.orchestrator = this.newOrchestrator();
    await this.orchestrator.adopt();
  }

  private newOrchestrator(): Orchestrator {
    const { maxLivePerTeam, store } = this;
    return new Orchestrator({
      store,
      host: this.host,
      pool: this.pool,
      budget: this.budget,
      dataDir: this.dir,
      defaultRuntime: "runsc",
      // long: deep pauses are asked for (deepPause) rather than waited for
      deepPauseAfterMs: 3_600_000,
      ...(maxLivePerTeam !== undefined ? { maxLivePerTeam } : {}),
      log: silentLogger,
      onUnavailable: (id) => this.unavailable.push(id),
    });
  }

  static async open(opts: { maxLivePerTeam?: number } = {}): Promise<LifecycleHarness> {
    const dir = mkdtempSync(path.join(os.tmpdir(), "x-lifecycle-"));
    const store = await openStore({ dataDir: dir, sealer: fakeSealer() });
    await store.teams.ensureFirstTeam();
    const team = await store.teams.defaultTeam();
    const template = await store.templates.createTemplate(team.id);
    const build = await store.templates.createBuild({
      templateId: template.id,
      status: "ready",
      cpuCount: 1,
      memoryMB: 256,
      diskSizeMB: 512,
      envdVersion: "0.6.4",
      spec: { user: "user", envVars: {} },
      layers: ["layers/base"],
    });
    return new LifecycleHarness(store, dir, team, template, build, opts.maxLivePerTeam);
  }

  async close(): Promise<void> {
    this.orchestrator.detach();
    await this.pool.close();
    await this.store.close();
    rmSync(this.dir, { recursive: true, force: true });
  }

  request(o: Partial<CreateSandboxRequest> = {}): CreateSandboxRequest {
    return {
      team: this.team,
      template: this.template,
      build: this.build,
      timeoutSeconds: 300,
      metadata: {},
      envVars: {},
      egress: OPEN_EGRESS,
      ingress: { allowPublicTraffic: true, httpsPorts: [] },
      autoPause: false,
      autoPauseMemory: true,
      autoResume: false,
      ...o,
    };
  }

  create(o: Partial<CreateSandboxRequest> & { runtime?: RuntimeName } = {}): Promise<Sandbox> {
    return this.orchestrator.create(this.request(o));
  }

  /** The sandbox's state as the orchestrator would look it up. */
  async stateOf(id: string): Promise<LifeState> {
    return lifeStateOf(await this.store.sandboxes.get(id), this.store.nodeId);
  }

  /** A sandbox brought into `state` the way it gets there in use (its id). */
  async sandboxIn(state: LifeState, o: Partial<CreateSandboxRequest> = {}): Promise<string> {
    const flags = {
      ...(o.autoPause !== undefined ? { autoPause: o.autoPause } : {}),
      ...(o.autoPauseMemory !== undefined ? { autoPauseMemory: o.autoPauseMemory } : {}),
      ...(o.autoResume !== undefined ? { autoResume: o.autoResume } : {}),
    };
    if (state === "starting") return this.recordStarting(flags);
    if (state === "elsewhere") return this.recordElsewhere(flags);
    const { id } = await this.create(o);
    if (state === "killed") await this.orchestrator.kill(id);
    if (state === "frozen" || state === "checkpointed" || state === "stopped")
      await this.orchestrator.pause(id, state);
    if (state === "error") {
      this.host.breakAgent(id);
      await this.orchestrator.checkHealth(id);
    }
    // as markLost marks every sandbox of a node that stopped answering
    if (state === "lost")
      await this.store.sandboxes.update(id, { state: "lost", reason: "its node stopped answering" });
    return id;
  }

  /** A record of a sandbox whose create a crash cut short: nothing of it runs here. */
  private async recordStarting(o: Partial<Sandbox>): Promise<string> {
    const sandbox = { ...this.record(newSandboxId(), "starting"), ...o };
    await this.store.sandboxes.insert(sandbox);
    return sandbox.id;
  }

  /** A running sandbox of another node (beyond one machine). */
  private async recordElsewhere(o: Partial<Sandbox>): Promise<string> {
    const sandbox = { ...this.record(newSandboxId(), "running"), ...o, nodeId: "node-b" };
    await this.store.sandboxes.insert(sandbox);
    return sandbox.id;
  }

  private record(id: string, state: Sandbox["state"]): Sandbox {
    return sandboxRecord({
      id,
      teamId: this.team.id,
      templateId: this.template.id,
      buildId: this.build.id,
      state,
      runtime: "runsc",
      memoryMB: 256,
      diskSizeMB: 512,
    });
  }
}
