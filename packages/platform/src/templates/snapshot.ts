import { randomBytes } from "node:crypto";
import type { Orchestrator } from "../orchestrator/orchestrator.js";
import { newId, nowIso } from "../store/ids.js";
import { type BuildRow, DEFAULT_TAG, type Store, type Team, type TemplateRow } from "../store/index.js";
import { type MemoryImage, runtimeSpecOf } from "./build-spec.js";
import type { LayerStore } from "./layers.js";
import type { TemplateName } from "./names.js";

export interface SnapshotDeps {
  store: Store;
  orchestrator: Orchestrator;
  layers: LayerStore;
}

export interface TakenSnapshot {
  template: TemplateRow;
  build: BuildRow;
  tag: string;
}

/**
 * Snapshots a sandbox: its writable layer is copied into a new layer, stacked on the layers of
 * the build it runs from, as a ready build of the snapshot template. Under gVisor (unless
 * `memory` is false) the sandbox is checkpointed for it, so the build also keeps the memory
 * image (`snapshot_kind` "memory"): sandboxes from it continue the running processes. When
 * that is impossible (runc, or the sandbox's own processes listen on TCP) only files are kept
 * (`snapshot_kind` "files") and sandboxes from it boot afresh, start command included. A
 * named snapshot goes to the team's template of that name when there is one (a new build of
 * it), otherwise to a new template; the build gets the name's tag (`default` when none).
 */
export async function takeSnapshot(
  deps: SnapshotDeps,
  sandboxId: string,
  team: Team,
  name?: TemplateName & { namespace: string },
  opts: { memory?: boolean } = {},
): Promise<TakenSnapshot> {
  const { store, layers } = deps;
  const suffix = randomBytes(10).toString("hex");
  const { layer, memory, row } = await deps.orchestrator.withStateStill(
    sandboxId,
    { memory: opts.memory !== false },
    async ({ upper, row, memoryImage }) => {
      const layer = await layers.copyIn(upper, `snap-${suffix}`);
      try {
        const memory = memoryImage && (await layers.copyIn(memoryImage, `mem-${suffix}`));
        return { layer, memory, row };
      } catch (err) {
        await layers.remove([layer]);
        throw err;
      }
    },
  );
  const kind = memory ? "memory" : "files";
  const memorySpec: MemoryImage | undefined = memory
    ? { image: memory, runtime: row.runtime, accessToken: row.envd_access_token }
    : undefined;
  try {
    const source = await store.templates.getBuild(row.build_id);
    if (!source) throw new Error(`build ${row.build_id} of sandbox ${sandboxId} is gone`);
    const template = await snapshotTemplate(store, team, sandboxId, name);
    const tag = name?.tag ?? DEFAULT_TAG;
    const build = await store.templates.createBuild({
      template_id: template.id,
      status: "ready",
      reason: null,
      finished_at: nowIso(),
      cpu_count: row.cpu_count,
      memory_mb: row.memory_mb,
      disk_size_mb: row.disk_size_mb,
      envd_version: source.envd_version,
      // the sandbox's environment (template's and its own) carries over to sandboxes from the snapshot
      spec: JSON.stringify({
        ...runtimeSpecOf(source),
        envVars: JSON.parse(row.env_vars) as Record<string, string>,
        snapshotOf: { sandboxId, buildId: source.id },
        ...(memorySpec ? { memory: memorySpec } : {}),
      }),
      layers: JSON.stringify([layer, ...(JSON.parse(source.layers ?? "[]") as string[])]),
      start_cmd: source.start_cmd,
      ready_cmd: source.ready_cmd,
      snapshot_kind: kind,
    });
    await store.templates.appendLogs(build.id, [
      {
        timestamp: nowIso(),
        level: "info",
        message: memory
          ? `memory snapshot of sandbox ${sandboxId}: files and running processes are kept (sandboxes from it continue them)`
          : `files snapshot of sandbox ${sandboxId}: files are kept, running processes are not (sandboxes from it boot afresh)`,
        step: null,
      },
    ]);
    await store.templates.setTags(template.id, build.id, [tag]);
    await store.snapshots.insert({
      id: newId(),
      team_id: team.id,
      sandbox_id: sandboxId,
      template_id: template.id,
      build_id: build.id,
      created_at: nowIso(),
    });
    await store.events.record("sandbox.snapshot", {
      teamId: team.id,
      sandboxId,
      data: { templateId: template.id, buildId: build.id, tag, kind },
    });
    return { template, build, tag };
  } catch (err) {
    await layers.remove(memory ? [layer, memory] : [layer]);
    throw err;
  }
}

async function snapshotTemplate(
  store: Store,
  team: Team,
  sandboxId: string,
  name: (TemplateName & { namespace: string }) | undefined,
): Promise<TemplateRow> {
  if (!name) return store.templates.createTemplate(team.id, { fromSandboxId: sandboxId });
  const existing = await store.templates.aliasTarget(name.namespace, name.alias);
  const found = existing && (await store.templates.getTemplate(existing));
  if (found) return found;
  const created = await store.templates.createTemplate(team.id, { fromSandboxId: sandboxId });
  if (await store.templates.addAlias(name.namespace, name.alias, created.id)) return created;
  // taken meanwhile by a concurrent snapshot of the same name: join that template
  await store.templates.deleteTemplate(created.id);
  return (await store.templates.getTemplate(
    (await store.templates.aliasTarget(name.namespace, name.alias))!,
  ))!;
}
