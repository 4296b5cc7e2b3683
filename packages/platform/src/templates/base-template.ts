import path from "node:path";
import { ensureBaseImage, type ImageBuildProgress } from "../rootfs/base-image.js";
import type { Store, Team } from "../store/index.js";
import { DEFAULT_TAG } from "../store/index.js";

/** The team that owns the platform's own public templates; it has no API keys. */
export const SYSTEM_NAMESPACE = "system";
export const BASE_ALIAS = "base";

export interface BaseTemplateOptions {
  store: Store;
  dataDir: string;
  envdVersion: string;
  diskSizeMB: number;
  onProgress?(p: ImageBuildProgress): void;
}

export async function systemTeam(store: Store): Promise<Team> {
  const existing = (await store.teams.listTeams()).find((t) => t.namespace === SYSTEM_NAMESPACE);
  return existing ?? store.teams.createTeam("System", SYSTEM_NAMESPACE);
}

/**
 * Makes sure the public `base` template exists and its default build is the current base
 * image (Debian 12 from debootstrap, built on first need and again only when its recipe
 * changes). Returns the template id.
 */
export async function ensureBaseTemplate(o: BaseTemplateOptions): Promise<string> {
  const image = await ensureBaseImage({ dataDir: o.dataDir, onProgress: o.onProgress });
  const layer = path.relative(o.dataDir, image.rootfs);
  const team = await systemTeam(o.store);
  let templateId = await o.store.templates.aliasTarget(SYSTEM_NAMESPACE, BASE_ALIAS);
  if (!templateId) {
    templateId = (await o.store.templates.createTemplate(team.id, { public: true })).id;
    await o.store.templates.addAlias(SYSTEM_NAMESPACE, BASE_ALIAS, templateId);
  }
  const current = await o.store.templates.buildForTag(templateId, DEFAULT_TAG);
  if (current?.layers === JSON.stringify([layer])) return templateId;
  const now = new Date().toISOString();
  const build = await o.store.templates.createBuild({
    template_id: templateId,
    status: "ready",
    reason: null,
    finished_at: now,
    cpu_count: 2,
    memory_mb: 1024,
    disk_size_mb: o.diskSizeMB,
    envd_version: o.envdVersion,
    spec: JSON.stringify({ from: "debootstrap", recipe: image.hash, user: "user", workdir: "/home/user" }),
    layers: JSON.stringify([layer]),
    start_cmd: null,
    ready_cmd: null,
    snapshot_kind: null,
  });
  await o.store.templates.setTags(templateId, build.id, [DEFAULT_TAG]);
  return templateId;
}
