import type { BuildRow, Store, TemplateRow } from "../../store/index.js";
import type { BuildLogRow } from "../../store/templates.js";
import { fullName } from "../../templates/names.js";

/** JSON shapes of openapi.yaml for templates, builds and their logs. */

export async function namesOf(
  store: Store,
  templateId: string,
): Promise<{ aliases: string[]; names: string[] }> {
  const rows = await store.templates.aliasesOf(templateId);
  return { aliases: rows.map((r) => r.alias), names: rows.map((r) => fullName(r.namespace, r.alias)) };
}

export function presentBuild(b: BuildRow) {
  return {
    buildID: b.id,
    status: b.status,
    createdAt: b.created_at,
    updatedAt: b.updated_at,
    ...(b.finished_at ? { finishedAt: b.finished_at } : {}),
    cpuCount: b.cpu_count,
    memoryMB: b.memory_mb,
    diskSizeMB: b.disk_size_mb,
    envdVersion: b.envd_version,
  };
}

export function presentLogEntry(e: BuildLogRow) {
  return { timestamp: e.timestamp, level: e.level, message: e.message, ...(e.step ? { step: e.step } : {}) };
}

/** A template as listed (`Template`): with its latest successful build, or its latest one. */
export async function presentListedTemplate(store: Store, t: TemplateRow) {
  const latest = await store.templates.latestBuild(t.id);
  if (!latest) return undefined;
  const build = (await store.templates.latestBuild(t.id, "ready")) ?? latest;
  return {
    templateID: t.id,
    buildID: build.id,
    cpuCount: build.cpu_count,
    memoryMB: build.memory_mb,
    diskSizeMB: build.disk_size_mb,
    public: t.public === 1,
    ...(await namesOf(store, t.id)),
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    createdBy: null,
    lastSpawnedAt: t.last_spawned_at,
    spawnCount: t.spawn_count,
    buildCount: await store.templates.countBuilds(t.id),
    envdVersion: build.envd_version,
    buildStatus: latest.status,
  };
}

/** A template with one page of builds (`TemplateWithBuilds`). */
export async function presentTemplateWithBuilds(
  store: Store,
  t: TemplateRow,
  builds: BuildRow[],
  nextToken: string | null,
) {
  return {
    templateID: t.id,
    public: t.public === 1,
    ...(await namesOf(store, t.id)),
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    lastSpawnedAt: t.last_spawned_at,
    spawnCount: t.spawn_count,
    builds: builds.map(presentBuild),
    nextToken,
  };
}
