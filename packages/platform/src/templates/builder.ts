import { chown, rm } from "node:fs/promises";
import path from "node:path";
import { runCommand } from "../agent/commands.js";
import { runStartCommand } from "../agent/start-command.js";
import { crashPoint } from "../lib/crash-point.js";
import type { Logger } from "../lib/log.js";
import type { RuntimeName } from "../model/sandbox.js";
import type { Team } from "../model/team.js";
import { type Build, type RuntimeSpec, runtimeSpecOf } from "../model/template.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import type { Store } from "../store/index.js";
import { BuildLog, type BuildLogLimits } from "./build-log.js";
import { withBuildSandbox } from "./build-sandbox.js";
import { type BuildStartRequest, InvalidBuild, type Step } from "./build-spec.js";
import { copyFromArchive } from "./copy-step.js";
import { LayerStore } from "./layers.js";
import { describeImageSource, type ImageSource, importImage } from "./oci-import.js";
import type { RegistryCache } from "./registry/pull.js";
import type { BuildUploads } from "./uploads.js";

/** What a build starts from: a ready build of a template, or an image (local or in a registry). */
export type BuildBase =
  | { kind: "template"; name: string; build: Build }
  | Exclude<ImageSource, { kind: "base" }>;

export interface BuildJob {
  team: Team;
  build: Build;
  base: BuildBase;
  steps: Step[];
  request: BuildStartRequest;
  /** Tags pointed at the build once it is ready. */
  tags: string[];
}

export interface BuilderOptions {
  store: Store;
  host: SandboxHost;
  runtime: RuntimeName;
  layers: LayerStore;
  uploads: BuildUploads;
  /** Where `fromImage` may read OCI layouts and archives from. */
  importDir: string;
  /** Images pulled from registries, shared by all builds. */
  registries: RegistryCache;
  log: Logger;
  /** Builds run at once; later ones wait in status `waiting`. */
  concurrency?: number;
  /** How much of its commands' output one build's log keeps (build-log.ts's default otherwise). */
  logLimits?: BuildLogLimits;
}

/** How long a start command may take to become ready during a build. */
const READY_TIMEOUT_MS = 5 * 60_000;

/** Build context between steps: what ENV, WORKDIR and USER set, and the layer stack so far. */
interface Context extends Pick<RuntimeSpec, "user" | "workdir" | "envVars"> {
  layers: string[];
  key: string;
}

/** One build under way: its job, context so far, log and abort signal. */
interface BuildRun {
  job: BuildJob;
  ctx: Context;
  log: BuildLog;
  signal: AbortSignal;
}

class BuildStepError extends Error {
  constructor(
    message: string,
    readonly step: string,
  ) {
    super(message);
    this.name = "BuildStepError";
  }
}

function describe(step: Step): string {
  switch (step.type) {
    case "RUN":
      return `RUN ${step.cmd}${step.user ? ` (as ${step.user})` : ""}`;
    case "COPY":
      return `COPY ${step.src} ${step.dest}`;
    case "ENV":
      return `ENV ${step.vars.map(([k, v]) => `${k}=${v}`).join(" ")}`;
    case "WORKDIR":
      return `WORKDIR ${step.dir}`;
    case "USER":
      return `USER ${step.user}`;
  }
}

/** The request as kept with the build: registry credentials serve the pull and are not stored. */
function withoutCredentials(request: BuildStartRequest): BuildStartRequest {
  const { fromImageRegistry: _credentials, ...kept } = request;
  return kept;
}

/** The parts of a step that decide its result (not client-side flags such as `forceUpload`). */
function cacheIdentity(step: Step): string {
  return JSON.stringify({
    type: step.raw.type,
    args: step.raw.args ?? [],
    filesHash: step.raw.filesHash ?? "",
  });
}

/**
 * Runs template builds: a queue of jobs, each a chain of steps from a base. Every step that
 * changes files yields a layer keyed by the hash of its parent's key and its own inputs, so a
 * rebuild with unchanged steps reuses their layers without running anything; `force` (the
 * client's skipCache) salts the key with the build id, which rebuilds that step and all after.
 * RUN steps (and USER, when it must create the account) run in a throwaway sandbox booted from
 * the layers so far; COPY and WORKDIR write straight into a new layer on the host; ENV changes
 * only the context. The finished build records its layers, topmost first, and the runtime spec.
 */
export class Builder {
  private readonly queue: BuildJob[] = [];
  private readonly running = new Map<string, { done: Promise<void>; abort: AbortController }>();
  private closed = false;

  constructor(private readonly o: BuilderOptions) {}

  /** Builds left unfinished by a previous process failed with it. */
  async recover(): Promise<void> {
    const n = await this.o.store.templates.failUnfinishedBuilds(
      "the platform restarted while this build was queued or running",
    );
    if (n > 0) this.o.log.warn({ builds: n }, "marked interrupted builds as failed");
  }

  /** Whether the build is queued or running here. */
  has(buildId: string): boolean {
    return this.running.has(buildId) || this.queue.some((j) => j.build.id === buildId);
  }

  enqueue(job: BuildJob): void {
    if (this.closed) throw new Error("the platform is shutting down");
    this.queue.push(job);
    this.pump();
  }

  /** Stops taking builds, aborts running ones (their sandboxes are removed) and waits for them. */
  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) {
      await this.fail(job.build.id, "the platform shut down before the build started", "base");
    }
    for (const run of this.running.values()) run.abort.abort();
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private pump(): void {
    while (!this.closed && this.running.size < (this.o.concurrency ?? 2) && this.queue.length > 0) {
      const job = this.queue.shift()!;
      const abort = new AbortController();
      const done = this.run(job, abort.signal)
        .catch((err) => this.o.log.error({ buildId: job.build.id, err }, "build crashed"))
        .finally(() => {
          this.running.delete(job.build.id);
          this.pump();
        });
      this.running.set(job.build.id, { done, abort });
    }
  }

  private async fail(buildId: string, message: string, step: string): Promise<void> {
    await this.o.store.templates.updateBuild(buildId, {
      status: "error",
      reason: { message, step },
      finishedAt: new Date().toISOString(),
    });
  }

  private async run(job: BuildJob, signal: AbortSignal): Promise<void> {
    const { store } = this.o;
    const build = job.build;
    const log = new BuildLog(
      store,
      build.id,
      (err) => this.o.log.error({ buildId: build.id, err }, "could not write build logs"),
      this.o.logLimits,
    );
    const started = Date.now();
    await store.templates.updateBuild(build.id, { status: "building" });
    let current = "base";
    let run: BuildRun | undefined;
    try {
      run = { job, ctx: await this.base(job, log, signal), log, signal };
      for (const [i, step] of job.steps.entries()) {
        current = String(i + 1);
        if (signal.aborted) throw new BuildStepError("the platform shut down during the build", current);
        const forced = job.request.force === true || step.force;
        run.ctx.key = LayerStore.key(run.ctx.key, cacheIdentity(step), forced ? `force:${build.id}` : "");
        await this.step(run, step, current);
      }
      const { ctx } = run;
      const runtime: RuntimeSpec = {
        user: ctx.user,
        workdir: ctx.workdir,
        envVars: ctx.envVars,
        startCmd: job.request.startCmd,
        readyCmd: job.request.readyCmd,
      };
      if (runtime.startCmd) {
        current = "finalize";
        await this.checkStartCommand(run, runtime);
      }
      await store.templates.updateBuild(build.id, {
        layers: ctx.layers,
        spec: { ...runtime, request: withoutCredentials(job.request) },
      });
      // logs and tags before the status: a client that sees `ready` finds both in place
      log.info(`Build finished in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      await log.flush();
      await store.templates.setTags(build.templateId, build.id, job.tags);
      await store.templates.updateBuild(build.id, { status: "ready", finishedAt: new Date().toISOString() });
      await store.templates.updateTemplate(build.templateId, {});
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      const step =
        err instanceof BuildStepError || err instanceof InvalidBuild ? (err.step ?? current) : current;
      log.write("error", `Build failed: ${message}`, step);
      await log.flush();
      // the layers of the steps that did succeed stay cache entries; recorded, they go with the template
      if (run) await store.templates.updateBuild(build.id, { layers: run.ctx.layers });
      await this.fail(build.id, message, step);
    }
  }

  private async base(job: BuildJob, log: BuildLog, signal: AbortSignal): Promise<Context> {
    const scope = job.team.id;
    if (job.base.kind === "template") {
      const parent = job.base.build;
      const spec = runtimeSpecOf(parent);
      const layers = parent.layers;
      log.info(`FROM template ${job.base.name} (build ${parent.id})`, "base");
      // beyond one machine, the parent may have been built on another node: its layers come here first
      await this.o.host.ensureLayers(layers.map((l) => this.o.layers.abs(l)));
      const ctx = { user: spec.user, workdir: spec.workdir, envVars: spec.envVars };
      return {
        ...ctx,
        layers,
        key: LayerStore.key(scope, "template", JSON.stringify(layers), JSON.stringify(ctx)),
      };
    }
    log.info(`FROM ${describeImageSource(job.base)}`, "base");
    const image = await importImage(job.base, {
      layers: this.o.layers,
      importDir: this.o.importDir,
      registries: this.o.registries,
      scope,
      log: (line) => log.output(line, "base"),
      signal,
    });
    const { user, workdir, envVars, layer, key } = image;
    return { user, workdir, envVars, layers: [layer], key };
  }

  /**
   * One step: ENV changes the context only; any other step reuses the layer of its key when
   * there is one, and otherwise makes it. Each of those leaves a layer, an empty one when it
   * changed nothing: stacked all the same, so every cache entry a build relies on is recorded
   * in its layers (and removed with the last template using it).
   */
  private async step(run: BuildRun, step: Step, n: string): Promise<void> {
    const { ctx, log } = run;
    const label = `[${n}/${run.job.steps.length}] ${describe(step)}`;
    if (step.type === "ENV") {
      ctx.envVars = { ...ctx.envVars, ...Object.fromEntries(step.vars) };
      log.info(label, n);
      return;
    }
    const { layers } = this.o;
    if (step.type === "WORKDIR") ctx.workdir = await this.resolveWorkdir(ctx, step.dir);
    let layer: string;
    if (await layers.has(ctx.key)) {
      log.info(`${label} (cached)`, n);
      layer = layers.rel(ctx.key);
    } else {
      log.info(label, n);
      layer = await this.makeLayer(run, step, n);
    }
    if (step.type === "USER") ctx.user = step.user;
    ctx.layers = [layer, ...ctx.layers];
  }

  private async resolveWorkdir(ctx: Context, dir: string): Promise<string> {
    if (path.posix.isAbsolute(dir)) return path.posix.normalize(dir);
    const home = async () =>
      this.o.layers.inspect(ctx.layers, async (view) => (await view.user(ctx.user))?.home);
    return path.posix.resolve(ctx.workdir ?? (await home()) ?? "/", dir);
  }

  private async makeLayer(run: BuildRun, step: Exclude<Step, { type: "ENV" }>, n: string): Promise<string> {
    const { layers } = this.o;
    const { ctx } = run;
    switch (step.type) {
      case "RUN":
        await this.runInSandbox(run, { cmd: step.cmd, user: step.user ?? ctx.user }, n);
        return layers.rel(ctx.key);
      case "USER": {
        const exists = await layers.inspect(
          ctx.layers,
          async (view) => (await view.user(step.user)) !== undefined,
        );
        if (exists) return layers.empty(ctx.key);
        run.log.info(`creating user ${step.user}`, n);
        const cmd = `if command -v useradd >/dev/null; then useradd --create-home --shell /bin/bash ${step.user}; else adduser -D ${step.user}; fi`;
        await this.runInSandbox(run, { cmd, user: "root" }, n);
        return layers.rel(ctx.key);
      }
      case "COPY": {
        const scratch = await layers.staging();
        try {
          return await layers.writeThrough(ctx.layers, ctx.key, (view) =>
            copyFromArchive(view, {
              archive: this.o.uploads.path(run.job.team.id, step.filesHash),
              scratch,
              src: step.src,
              dest: step.dest,
              owner: step.owner,
              mode: step.mode,
              workdir: ctx.workdir,
              user: ctx.user,
              onSkipped: (entry, kind) => run.log.output(`skipped ${entry}: ${kind} is not copied`, n),
            }),
          );
        } catch (err) {
          const reason = err instanceof Error ? err.message : String(err);
          throw new BuildStepError(`COPY ${step.src} ${step.dest}: ${reason}`, n);
        } finally {
          await rm(scratch, { recursive: true, force: true });
        }
      }
      case "WORKDIR": {
        const dir = ctx.workdir!;
        // like `mkdir -p` as the step's user: a directory it makes is that user's
        return layers.writeThrough(ctx.layers, ctx.key, async (view) => {
          if (await view.stat(dir)) return;
          const owner = await view.user(ctx.user);
          await view.withDir(dir, true, async (made) => {
            if (owner) await chown(made, owner.uid, owner.gid);
          });
        });
      }
    }
  }

  private sandboxSpec(run: BuildRun) {
    return {
      host: this.o.host,
      runtime: this.o.runtime,
      lowers: run.ctx.layers.map((l) => this.o.layers.abs(l)),
      cpuCount: run.job.build.cpuCount,
      memoryMB: run.job.build.memoryMB,
      user: run.ctx.user,
      workdir: run.ctx.workdir,
    };
  }

  /**
   * A RUN-like step: the command in a sandbox of the layers so far. Its changes become the
   * step's layer only when it succeeds: a failed command leaves no cache entry behind.
   */
  private async runInSandbox(run: BuildRun, c: { cmd: string; user: string }, n: string): Promise<void> {
    const { ctx, log, signal } = run;
    const command = { cmd: c.cmd, user: c.user, cwd: ctx.workdir, envs: ctx.envVars };
    await withBuildSandbox(
      this.sandboxSpec(run),
      async (target) => {
        const result = await runCommand(target, command, { onOutput: (line) => log.output(line, n), signal });
        if (result.exitCode !== 0) {
          throw new BuildStepError(
            `command '${c.cmd}' failed: ${result.status} (exit code ${result.exitCode})`,
            n,
          );
        }
        crashPoint("build:step-ran");
      },
      async (upper) => {
        await this.o.layers.commit(upper, ctx.key);
      },
    ).catch((err: unknown) => {
      if (signal.aborted) throw new BuildStepError("the platform shut down during the build", n);
      throw err;
    });
  }

  /** Starts the start command once in a sandbox of the finished layers and waits for its ready command. */
  private async checkStartCommand(run: BuildRun, runtime: RuntimeSpec): Promise<void> {
    const { ctx, log } = run;
    const startCmd = runtime.startCmd!;
    log.info(
      `Starting '${startCmd}'${runtime.readyCmd ? `, waiting for '${runtime.readyCmd}'` : ""}`,
      "finalize",
    );
    const spec = {
      startCmd,
      readyCmd: runtime.readyCmd,
      user: ctx.user,
      workdir: ctx.workdir,
      envVars: ctx.envVars,
    };
    await withBuildSandbox(this.sandboxSpec(run), (target) =>
      runStartCommand(target, spec, {
        timeoutMs: READY_TIMEOUT_MS,
        onOutput: (line) => log.output(line, "finalize"),
      }),
    );
    log.info("Template is ready", "finalize");
  }
}
