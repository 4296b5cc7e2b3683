import type { IncomingMessage } from "node:http";
import type { Schemas } from "@x/platform-client";
import { conflict, forbidden, invalid, notFound } from "../../model/errors.js";
import { effectiveLimits, type PlatformLimits, SYSTEM_NAMESPACE, type Team } from "../../model/team.js";
import {
  BASE_ALIAS,
  DEFAULT_TAG,
  memoryImageOf,
  parseTemplateRef,
  type Template,
} from "../../model/template.js";
import type { Store } from "../../store/index.js";
import { type BuildStartRequest, parseSteps } from "../../templates/build-spec.js";
import type { BuildBase, Builder } from "../../templates/builder.js";
import type { LayerStore } from "../../templates/layers.js";
import {
  checkTemplateRoom,
  normalizeTags,
  parseName,
  parseOwnName,
  templateNamed,
} from "../../templates/names.js";
import { parseImageSource } from "../../templates/oci-import.js";
import type { BuildUploads } from "../../templates/uploads.js";
import type { ApiRequest, HandlersFor } from "../handler.js";
import { pageOf } from "../paging.js";
import { teamOf } from "./access.js";
import {
  namesOf,
  presentListedTemplate,
  presentLogEntry,
  presentTemplateWithBuilds,
} from "./template-present.js";

export interface TemplateRoutesOptions {
  store: Store;
  builder: Builder;
  uploads: BuildUploads;
  layers: LayerStore;
  /** Where `fromImage` may read local OCI layouts and archives from. */
  importDir: string;
  envdVersion: string;
  diskSizeMB: number;
  /** Free space (MiB) a fresh sandbox's disk of this size leaves its writers (rootfs/disk.ts). */
  diskFreeSpaceMB(sizeMB: number): Promise<number>;
  /** The platform's limits; a team's own may lower them (its builds' CPU, memory and disk). */
  limits: PlatformLimits;
  /** Lets go of the warm pools of a template: before its layers go, or when its pool bounds change. */
  dropWarmPools?(templateId: string): Promise<void>;
  /** Largest COPY archive accepted. */
  maxUploadBytes: number;
}

const DEFAULT_CPU_COUNT = 2;
const DEFAULT_MEMORY_MB = 1024;
const LEVELS = ["debug", "info", "warn", "error"];

type TemplateOps =
  | "listTemplates"
  | "listTemplatesV2"
  | "createTemplate"
  | "getTemplateByAlias"
  | "getTemplate"
  | "deleteTemplate"
  | "updateTemplate"
  | "updateTemplateV2"
  | "listTemplateTags"
  | "assignTemplateTags"
  | "deleteTemplateTags"
  | "getTemplateFileUploadLink"
  | "uploadTemplateFiles"
  | "startTemplateBuild"
  | "getTemplateBuildStatus"
  | "getTemplateBuildLogs";

/** The absolute base URL the caller reached us at, for links it will follow (upload URLs). */
function publicBase(req: IncomingMessage): string {
  const forwarded = req.headers["x-forwarded-proto"];
  const proto = (Array.isArray(forwarded) ? forwarded[0] : forwarded)?.split(",")[0]?.trim() || "http";
  return `${proto}://${req.headers.host ?? "localhost"}`;
}

/**
 * Templates, their builds, files, logs and tags. Access: a team may read its own templates and
 * public ones; only the owning team may build, tag, change or delete. Another team's private
 * template answers 403 (it exists), an unknown one 404.
 */
export function templateRoutes(o: TemplateRoutesOptions): HandlersFor<TemplateOps> {
  const { store } = o;

  /** The template a path or body names (id, alias, `namespace/alias`, any with `:tag`). */
  async function find(raw: string, team: Team): Promise<Template> {
    const template = await store.templates.resolveTemplate(parseTemplateRef(raw), team);
    if (!template) throw notFound(`template '${raw}' not found`);
    return template;
  }

  async function readable(raw: string, team: Team): Promise<Template> {
    const template = await find(raw, team);
    if (template.teamId !== team.id && !template.public)
      throw forbidden(`template '${raw}' belongs to another team`);
    return template;
  }

  async function owned(raw: string, team: Team): Promise<Template> {
    const template = await find(raw, team);
    if (template.teamId !== team.id)
      throw forbidden(`template '${raw}' belongs to another team; only its team may change it`);
    return template;
  }

  async function ownedBuild(
    request: Pick<ApiRequest, "team"> & { params: { templateID: string; buildID: string } },
  ) {
    const team = teamOf(request);
    const template = await owned(request.params.templateID, team);
    const id = request.params.buildID;
    const build = await store.templates.getBuild(id);
    if (!build || build.templateId !== template.id)
      throw notFound(`build ${id} of template '${template.id}' not found`);
    return { team, template, build };
  }

  /** Whose a template is, as `team` sees it (`owner`, an extension): its own, the platform's, or public. */
  function ownerOf(team: Team): (t: Template) => Promise<Schemas["TemplateOwner"]> {
    const namespaces = new Map<string, Promise<string | undefined>>();
    return async (t) => {
      if (t.teamId === team.id) return "team";
      let namespace = namespaces.get(t.teamId);
      if (!namespace) {
        namespace = store.teams.getTeam(t.teamId).then((owner) => owner?.namespace);
        namespaces.set(t.teamId, namespace);
      }
      return (await namespace) === SYSTEM_NAMESPACE ? "system" : "public";
    };
  }

  async function listedTemplates(templates: Template[], team: Team) {
    const owner = ownerOf(team);
    const listed = await Promise.all(
      templates.map(async (t) => {
        const shown = await presentListedTemplate(store, t);
        return shown && { ...shown, owner: await owner(t) };
      }),
    );
    return listed.filter((t) => t !== undefined);
  }

  /** What `fromTemplate`/`fromImage` name, checked before the build is queued. */
  async function buildBase(request: BuildStartRequest, team: Team): Promise<BuildBase> {
    if (request.fromImage && request.fromTemplate)
      throw invalid("set one of fromImage and fromTemplate, not both");
    let ref: string;
    if (request.fromTemplate) {
      ref = request.fromTemplate;
    } else if (request.fromImage) {
      const source = parseImageSource(request.fromImage, o.importDir, request.fromImageRegistry);
      if (source.kind !== "base") return source;
      ref = `${SYSTEM_NAMESPACE}/${BASE_ALIAS}`;
    } else {
      throw invalid("set fromImage or fromTemplate: what the build starts from");
    }
    const template = await readable(ref, team);
    const tag = parseTemplateRef(ref).tag;
    const build = await store.templates.buildForTag(template.id, tag);
    if (build?.status !== "ready")
      throw notFound(`template '${ref}' has no ready build${tag ? ` tagged '${tag}'` : ""}`);
    return { kind: "template", name: ref, build };
  }

  /** Visibility and (an extension) the template's warm pool bounds; the pools start afresh with new bounds. */
  async function update(raw: string, team: Team, body: Schemas["TemplateUpdateRequest"]) {
    const template = await owned(raw, team);
    const pool = body.warmPool;
    if (pool?.min !== undefined && pool.max !== undefined && pool.min > pool.max) {
      throw invalid(`warmPool.min (${pool.min}) is above warmPool.max (${pool.max})`);
    }
    await store.templates.updateTemplate(template.id, { public: body.public, warmPool: pool });
    if (pool) await o.dropWarmPools?.(template.id);
    return { names: (await namesOf(store, template.id)).names };
  }

  const levelAtLeast = (wanted: string | undefined) => (e: { level: string }) =>
    !wanted || LEVELS.indexOf(e.level) >= LEVELS.indexOf(wanted);

  return {
    listTemplates: async (r) => {
      const team = teamOf(r);
      // `usable` (an extension): also the platform's templates and other teams' public ones,
      // the team's own first, then the platform's, then the others'
      const usable = r.params.scope === "usable";
      const listed = await listedTemplates(
        await store.templates.listTemplates(team.id, { includePublic: usable }),
        team,
      );
      const rank = { team: 0, system: 1, public: 2 } as const;
      return { status: 200, body: listed.sort((a, b) => rank[a.owner] - rank[b.owner]) };
    },

    listTemplatesV2: async (r) => {
      const team = teamOf(r);
      const page = await pageOf((limit, after) => store.templates.listTemplates(team.id, { limit, after }), {
        limit: r.params.limit,
        nextToken: r.params.nextToken,
        keyOf: (t) => ({ time: t.createdAt, id: t.id }),
      });
      return { status: 200, body: await listedTemplates(page.items, team), headers: page.headers };
    },

    createTemplate: async (r) => {
      const team = teamOf(r);
      const body = r.body;
      const raw = body.name ?? body.alias;
      if (!raw) throw invalid("name is required: the template's name, optionally 'name:tag'");
      const name = parseOwnName(raw, team.namespace);
      const requested = normalizeTags([...(name.tag ? [name.tag] : []), ...(body.tags ?? [])]);
      const tags = requested.length > 0 ? requested : [DEFAULT_TAG];
      const limits = effectiveLimits(team, o.limits);
      const cpuCount = body.cpuCount ?? Math.min(DEFAULT_CPU_COUNT, limits.cpuCount);
      const memoryMB = body.memoryMB ?? Math.min(DEFAULT_MEMORY_MB, limits.memoryMB);
      // E2B's words for a build past the team's limits
      if (cpuCount > limits.cpuCount)
        throw invalid(`CPU count exceeds team limits (max: ${limits.cpuCount}), got ${cpuCount}`);
      if (memoryMB > limits.memoryMB)
        throw invalid(`memory exceeds team limits (max: ${limits.memoryMB} MiB), got ${memoryMB}`);
      // the largest disk the team's sandboxes may have, and it holds only a sandbox's own
      // writes (the build's layers lie below it): its free space is what every sandbox of the
      // build starts with, whatever the steps wrote. 0 (or none) asks for nothing more
      const diskSizeMB = Math.min(o.diskSizeMB, limits.diskSizeMB);
      if (body.minFreeDiskMb) {
        const free = await o.diskFreeSpaceMB(diskSizeMB);
        if (body.minFreeDiskMb > free)
          throw invalid(
            `minFreeDiskMb exceeds team limits (max: ${free} MiB, what a sandbox's disk of ${diskSizeMB} MiB leaves free), got ${body.minFreeDiskMb}`,
          );
      }
      await checkTemplateRoom(store, team.id, name, limits.templates);
      const template = await templateNamed(store, team.id, name);
      const build = await store.templates.createBuild({
        templateId: template.id,
        status: "waiting",
        cpuCount,
        memoryMB,
        diskSizeMB,
        envdVersion: o.envdVersion,
        spec: { tags },
        layers: [],
      });
      return {
        status: 202,
        body: {
          templateID: template.id,
          buildID: build.id,
          public: template.public,
          ...(await namesOf(store, template.id)),
          tags,
        },
      };
    },

    getTemplateByAlias: async (r) => {
      const team = teamOf(r);
      const raw = r.params.alias;
      const name = parseName(raw);
      // an alias, not an id: the own team's, then the system's, or `namespace/alias`
      const template = await store.templates.resolveAlias(
        { namespace: name.namespace, name: name.alias },
        team,
      );
      if (!template) throw notFound(`template '${raw}' not found`);
      if (template.teamId !== team.id && !template.public)
        throw forbidden(`template '${raw}' belongs to another team`);
      return { status: 200, body: { templateID: template.id, public: template.public } };
    },

    getTemplate: async (r) => {
      const team = teamOf(r);
      const template = await readable(r.params.templateID, team);
      const page = await pageOf((limit, after) => store.templates.listBuilds(template.id, { limit, after }), {
        limit: r.params.limit,
        nextToken: r.params.nextToken,
        keyOf: (b) => ({ time: b.createdAt, id: b.id }),
      });
      return {
        status: 200,
        body: {
          ...(await presentTemplateWithBuilds(store, template, page.items, page.nextToken)),
          owner: await ownerOf(team)(template),
        },
        headers: page.headers,
      };
    },

    deleteTemplate: async (r) => {
      const team = teamOf(r);
      const raw = r.params.templateID;
      const template = await owned(raw, team);
      const live = await store.templates.liveSandboxCount(template.id);
      if (live > 0)
        throw conflict(
          `template '${raw}' is used by ${live} sandbox(es), running or paused: kill them first`,
        );
      const builds = await store.templates.listBuilds(template.id, { limit: Number.MAX_SAFE_INTEGER });
      // queued or running here; a build requested but never started (its upload failed, the
      // client went away) waits for nothing and goes with the template
      if (builds.some((b) => o.builder.has(b.id))) {
        throw conflict(`template '${raw}' has a build in progress: wait for it to finish`);
      }
      await o.dropWarmPools?.(template.id);
      const layers = new Set(builds.flatMap((b) => b.layers));
      const memoryImages = builds.flatMap((b) => memoryImageOf(b)?.image ?? []);
      await store.templates.deleteTemplate(template.id);
      // layers shared with other templates' builds stay; the rest go with the template
      const stillUsed = await store.templates.referencedLayers();
      await o.layers.remove([...[...layers].filter((l) => !stillUsed.has(l)), ...memoryImages]);
      return { status: 204 };
    },

    updateTemplate: async (r) => ({
      status: 200,
      body: await update(r.params.templateID, teamOf(r), r.body),
    }),
    updateTemplateV2: async (r) => ({
      status: 200,
      body: await update(r.params.templateID, teamOf(r), r.body),
    }),

    listTemplateTags: async (r) => {
      const template = await readable(r.params.templateID, teamOf(r));
      const tags = await store.templates.listTags(template.id);
      return {
        status: 200,
        body: tags.map((t) => ({ tag: t.tag, buildID: t.buildId, createdAt: t.createdAt })),
      };
    },

    assignTemplateTags: async (r) => {
      const { target } = r.body;
      const template = await owned(target, teamOf(r));
      const tag = parseName(target).tag ?? DEFAULT_TAG;
      const tags = normalizeTags(r.body.tags);
      const build = await store.templates.buildForTag(template.id, tag);
      if (!build) throw notFound(`template '${target}' has no build tagged '${tag}'`);
      if (build.status !== "ready")
        throw invalid(`build ${build.id} of '${target}' is ${build.status}; only ready builds can be tagged`);
      await store.templates.setTags(template.id, build.id, tags);
      return { status: 200, body: { tags, buildID: build.id } };
    },

    deleteTemplateTags: async (r) => {
      const { name } = r.body;
      const template = await owned(name, teamOf(r));
      const tags = normalizeTags(r.body.tags);
      const existing = new Set((await store.templates.listTags(template.id)).map((t) => t.tag));
      const missing = tags.filter((t) => !existing.has(t));
      if (missing.length > 0)
        throw notFound(`template '${name}' has no tag ${missing.map((t) => `'${t}'`).join(", ")}`);
      await store.templates.deleteTags(template.id, tags);
      return { status: 204 };
    },

    getTemplateFileUploadLink: async (r) => {
      const team = teamOf(r);
      const template = await owned(r.params.templateID, team);
      const { hash } = r.params;
      const token = o.uploads.token(template.id, hash);
      const url = `${publicBase(r.req)}/templates/${encodeURIComponent(template.id)}/files/${hash}/upload?token=${encodeURIComponent(token)}`;
      return { status: 201, body: { present: await o.uploads.has(team.id, hash), url } };
    },

    uploadTemplateFiles: async (r) => {
      const { templateID, hash, token } = r.params;
      if (!o.uploads.verify(templateID, hash, token)) {
        throw forbidden(
          "the upload link is invalid or has expired: ask for a new one (GET /templates/{templateID}/files/{hash})",
        );
      }
      const template = await store.templates.getTemplate(templateID);
      if (!template) throw notFound(`template '${templateID}' not found`);
      const team = await store.teams.getTeam(template.teamId);
      if (!team) throw notFound(`template '${templateID}' not found`);
      const limits = effectiveLimits(team, o.limits);
      await o.uploads.receive(template.teamId, hash, r.req, o.maxUploadBytes, {
        count: limits.uploads,
        bytes: limits.uploadsMB * 2 ** 20,
      });
      return { status: 204 };
    },

    startTemplateBuild: async (r) => {
      const { team, build } = await ownedBuild(r);
      if (build.status !== "waiting" || o.builder.has(build.id)) {
        throw conflict(
          `build ${build.id} was already started (${build.status}); request a new build with POST /v3/templates`,
        );
      }
      const body = r.body;
      const steps = parseSteps(body.steps ?? []);
      for (const [i, step] of steps.entries()) {
        if (step.type === "COPY" && !(await o.uploads.has(team.id, step.filesHash))) {
          throw invalid(
            `step ${i + 1} (COPY ${step.src}): its files (${step.filesHash}) were not uploaded; upload them first`,
          );
        }
      }
      const base = await buildBase(body, team);
      o.builder.enqueue({ team, build, base, steps, request: body, tags: build.spec.tags ?? [] });
      return { status: 202 };
    },

    getTemplateBuildStatus: async (r) => {
      const { template, build } = await ownedBuild(r);
      const entries = (
        await store.templates.logs(build.id, r.params.logsOffset ?? 0, r.params.limit ?? 100)
      ).filter(levelAtLeast(r.params.level));
      const { reason } = build;
      return {
        status: 200,
        body: {
          templateID: template.id,
          buildID: build.id,
          status: build.status,
          logEntries: entries.map(presentLogEntry),
          logs: [],
          ...(reason
            ? {
                reason: {
                  message: reason.message,
                  ...(reason.step ? { step: reason.step } : {}),
                  logEntries: [],
                },
              }
            : {}),
        },
      };
    },

    getTemplateBuildLogs: async (r) => {
      const { build } = await ownedBuild(r);
      const { cursor } = r.params;
      if (cursor !== undefined && Number.isNaN(new Date(cursor).getTime())) {
        throw invalid(`cursor ${cursor} is not a time: send Unix milliseconds`);
      }
      const entries = await store.templates.logsByTime(build.id, {
        from: cursor === undefined ? undefined : new Date(cursor).toISOString(),
        direction: r.params.direction ?? "forward",
        limit: r.params.limit ?? 100,
      });
      return {
        status: 200,
        body: { logs: entries.filter(levelAtLeast(r.params.level)).map(presentLogEntry) },
      };
    },
  };
}
