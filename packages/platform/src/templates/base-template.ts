import path from "node:path";
import type { Logger } from "../lib/log.js";
import { SYSTEM_NAMESPACE, type Team } from "../model/team.js";
import { BASE_ALIAS, type Build, DEFAULT_TAG, type Template } from "../model/template.js";
import { ensureBaseImage, type ImageBuildProgress } from "../rootfs/base-image.js";
import type { Store } from "../store/index.js";

export interface BaseTemplateOptions {
  store: Store;
  dataDir: string;
  envdVersion: string;
  diskSizeMB: number;
  /** Progress of the base image build (minutes, on first need); logged by phase to `log` when unset. */
  onProgress?(p: ImageBuildProgress): void;
  log?: Logger;
}

/** Logs a long build's progress by phase, with the share done, instead of every line. */
export function progressLogger(log: Logger): (p: ImageBuildProgress) => void {
  let phase = "";
  return (p) => {
    log.debug({ phase: p.phase, line: p.line }, "base image build");
    if (p.phase === phase) return;
    phase = p.phase;
    log.info({ phase: p.phase, percent: Math.floor((100 * p.done) / p.total) }, "building the base image");
  };
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
  const onProgress = o.onProgress ?? (o.log && progressLogger(o.log));
  const image = await ensureBaseImage({ dataDir: o.dataDir, onProgress });
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
