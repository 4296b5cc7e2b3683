import { randomBytes } from "node:crypto";
import { crashPoint } from "../lib/crash-point.js";
import { newId, nowIso } from "../lib/ids.js";
import { checkRoom, type PlatformLimits, type Team } from "../model/team.js";
import {
  type Build,
  DEFAULT_TAG,
  type MemoryImage,
  runtimeSpecOf,
  type Template,
} from "../model/template.js";
import type { Orchestrator } from "../orchestrator/orchestrator.js";
import type { Store } from "../store/index.js";
import type { LayerStore } from "../templates/layers.js";
import { checkTemplateRoom, type TemplateName, templateNamed } from "../templates/names.js";

export interface SnapshotDeps {
  store: Store;
  orchestrator: Orchestrator;
  layers: LayerStore;
}

export interface TakeSnapshotOptions {
  /** Whether to keep the memory too, where the runtime can (default true). */
  memory?: boolean;
  /** The team's limits of what it holds: the snapshot is refused (403) before anything is done past them. */
  limits: Pick<PlatformLimits, "templates" | "snapshots">;
}

export interface TakenSnapshot {
  template: Template;
  build: Build;
  tag: string;
}

/**
 * Snapshots a sandbox: its writable layer is copied into a new layer, stacked on the layers of
 * the build it runs from, as a ready build of the snapshot template. Under gVisor (unless
 * `memory` is false) the sandbox is checkpointed for it, so the build also keeps the memory
 * image (kind "memory"): sandboxes from it continue the running processes. When that is
 * impossible (runc, or the sandbox's own processes listen on TCP) only files are kept (kind
 * "files") and sandboxes from it boot afresh, start command included. A named snapshot goes
 * to the team's template of that name when there is one (a new build of it), otherwise to a
 * new template; the build gets the name's tag (`default` when none). A team that holds as many
 * snapshots as it may, or would need one template more than it may, is refused first.
 */
export async function takeSnapshot(
  deps: SnapshotDeps,
  sandboxId: string,
  team: Team,
  name: (TemplateName & { namespace: string }) | undefined,
  opts: TakeSnapshotOptions,
): Promise<TakenSnapshot> {
  const { store, layers } = deps;
  checkRoom(
    await store.snapshots.count(team.id),
    opts.limits.snapshots,
    "snapshots",
    "delete one (Sandbox.deleteSnapshot, DELETE /templates/{templateID})",
  );
  await checkTemplateRoom(store, team.id, name, opts.limits.templates);
  const suffix = randomBytes(10).toString("hex");
  const { layer, memory, sandbox } = await deps.orchestrator.withStateStill(
    sandboxId,
    { memory: opts.memory !== false },
    async ({ upper, sandbox, memoryImage }) => {
      const layer = await layers.copyIn(upper, layers.ownName("snap", suffix));
      crashPoint("snapshot:files-copied");
      try {
        const memory = memoryImage && (await layers.copyIn(memoryImage, layers.ownName("mem", suffix)));
        return { layer, memory, sandbox };
      } catch (err) {
        await layers.remove([layer]);
        throw err;
      }
    },
  );
  const kind = memory ? "memory" : "files";
  const memorySpec: MemoryImage | undefined = memory
    ? { image: memory, runtime: sandbox.runtime, accessToken: sandbox.envdAccessToken }
    : undefined;
  try {
    // the snapshot is on record whole or not at all: a crash midway leaves no half template
    return await deps.store.transaction(async (store) => {
      const source = await store.templates.getBuild(sandbox.buildId);
      if (!source) throw new Error(`build ${sandbox.buildId} of sandbox ${sandboxId} is gone`);
      const template = name
        ? await templateNamed(store, team.id, name)
        : await store.templates.createTemplate(team.id);
      const tag = name?.tag ?? DEFAULT_TAG;
      const build = await store.templates.createBuild({
        templateId: template.id,
        status: "ready",
        finishedAt: nowIso(),
        cpuCount: sandbox.cpuCount,
        memoryMB: sandbox.memoryMB,
        diskSizeMB: sandbox.diskSizeMB,
        envdVersion: source.envdVersion,
        // the sandbox's environment (template's and its own) carries over to sandboxes from the snapshot
        spec: {
          ...runtimeSpecOf(source),
          envVars: sandbox.envVars,
          snapshotOf: { sandboxId, buildId: source.id },
          ...(memorySpec ? { memory: memorySpec } : {}),
        },
        layers: [layer, ...source.layers],
        snapshotKind: kind,
      });
      await store.templates.appendLogs(build.id, [
        {
          timestamp: nowIso(),
          level: "info",
          message: memory
            ? `memory snapshot of sandbox ${sandboxId}: files and running processes are kept (sandboxes from it continue them)`
            : `files snapshot of sandbox ${sandboxId}: files are kept, running processes are not (sandboxes from it boot afresh)`,
        },
      ]);
      crashPoint("snapshot:build-recorded");
      await store.templates.setTags(template.id, build.id, [tag]);
      await store.snapshots.insert({
        id: newId(),
        teamId: team.id,
        sandboxId,
        templateId: template.id,
        buildId: build.id,
        createdAt: nowIso(),
      });
      await store.events.record("sandbox.snapshot", {
        teamId: team.id,
        sandboxId,
        data: { templateId: template.id, buildId: build.id, tag, kind },
      });
      return { template, build, tag };
    });
  } catch (err) {
    await layers.remove(memory ? [layer, memory] : [layer]);
    throw err;
  }
}
