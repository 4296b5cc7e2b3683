import path from "node:path";
import { SYSTEM_NAMESPACE, type Team } from "../model/team.js";
import { BASE_ALIAS, type Build, DEFAULT_TAG, type Template } from "../model/template.js";
import { ensureBaseImage, type ImageBuildProgress } from "../rootfs/base-image.js";
import type { Store } from "../store/index.js";

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
 * changes). Returns the template and its default build.
 */
export async function ensureBaseTemplate(
  o: BaseTemplateOptions,
): Promise<{ template: Template; build: Build }> {
  const image = await ensureBaseImage({ dataDir: o.dataDir, onProgress: o.onProgress });
  const layer = path.relative(o.dataDir, image.rootfs);
  const team = await systemTeam(o.store);
  const existing = await o.store.templates.aliasTarget(SYSTEM_NAMESPACE, BASE_ALIAS);
  let template = existing && (await o.store.templates.getTemplate(existing));
  if (!template) {
    template = await o.store.templates.createTemplate(team.id, { public: true });
    await o.store.templates.addAlias(SYSTEM_NAMESPACE, BASE_ALIAS, template.id);
  }
  const templateId = template.id;
  const current = await o.store.templates.buildForTag(templateId, DEFAULT_TAG);
  if (current?.layers.length === 1 && current.layers[0] === layer) return { template, build: current };
  const build = await o.store.templates.createBuild({
    templateId,
    status: "ready",
    finishedAt: new Date().toISOString(),
    cpuCount: 2,
    memoryMB: 1024,
    diskSizeMB: o.diskSizeMB,
    envdVersion: o.envdVersion,
    spec: { from: "debootstrap", recipe: image.hash, user: "user", workdir: "/home/user" },
    layers: [layer],
  });
  await o.store.templates.setTags(templateId, build.id, [DEFAULT_TAG]);
  return { template, build };
}
