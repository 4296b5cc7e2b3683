import type { Schemas } from "@x/platform-client";
import type { Build, BuildLogEntry, Template } from "../../model/template.js";
import type { Store } from "../../store/index.js";
import { fullName } from "../../templates/names.js";

/** JSON shapes of openapi.yaml for templates, builds and their logs. */

export async function namesOf(
  store: Store,
  templateId: string,
): Promise<{ aliases: string[]; names: string[] }> {
  const rows = await store.templates.aliasesOf(templateId);
  return { aliases: rows.map((r) => r.alias), names: rows.map((r) => fullName(r.namespace, r.alias)) };
}

export function presentBuild(b: Build): Schemas["TemplateBuild"] {
  return {
    buildID: b.id,
    status: b.status,
    createdAt: b.createdAt,
    updatedAt: b.updatedAt,
    ...(b.finishedAt ? { finishedAt: b.finishedAt } : {}),
    cpuCount: b.cpuCount,
    memoryMB: b.memoryMB,
    diskSizeMB: b.diskSizeMB,
    envdVersion: b.envdVersion,
  };
}

export function presentLogEntry(e: BuildLogEntry): Schemas["BuildLogEntry"] {
  return {
    timestamp: e.timestamp,
    level: e.level as Schemas["BuildLogEntry"]["level"],
    message: e.message,
    ...(e.step ? { step: e.step } : {}),
  };
}

/** A template as listed (`Template`): with its latest successful build, or its latest one. */
export async function presentListedTemplate(
  store: Store,
  t: Template,
): Promise<Schemas["Template"] | undefined> {
  const latest = await store.templates.latestBuild(t.id);
  if (!latest) return undefined;
  const build = (await store.templates.latestBuild(t.id, "ready")) ?? latest;
  return {
    templateID: t.id,
    buildID: build.id,
    cpuCount: build.cpuCount,
    memoryMB: build.memoryMB,
    diskSizeMB: build.diskSizeMB,
    public: t.public,
    ...(await namesOf(store, t.id)),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    createdBy: null,
    lastSpawnedAt: t.lastSpawnedAt,
    spawnCount: t.spawnCount,
    buildCount: await store.templates.countBuilds(t.id),
    envdVersion: build.envdVersion,
    buildStatus: latest.status,
  };
}

/** A template with one page of builds (`TemplateWithBuilds`). */
export async function presentTemplateWithBuilds(
  store: Store,
  t: Template,
  builds: Build[],
  nextToken: string | undefined,
): Promise<Schemas["TemplateWithBuilds"]> {
  return {
    templateID: t.id,
    public: t.public,
    ...(await namesOf(store, t.id)),
    createdAt: t.createdAt,
    updatedAt: t.updatedAt,
    lastSpawnedAt: t.lastSpawnedAt,
    spawnCount: t.spawnCount,
    ...(t.warmPool ? { warmPool: t.warmPool } : {}),
    builds: builds.map(presentBuild),
    nextToken: nextToken ?? null,
  };
}
