import type { IncomingMessage } from "node:http";
import { DEFAULT_TAG, parseTemplateRef, type Store, type Team, type TemplateRow } from "../../store/index.js";
import { BASE_ALIAS, SYSTEM_NAMESPACE } from "../../templates/base-template.js";
import {
  type BuildStartRequest,
  InvalidBuild,
  memoryImageOf,
  parseSteps,
} from "../../templates/build-spec.js";
import type { BuildBase, Builder } from "../../templates/builder.js";
import type { LayerStore } from "../../templates/layers.js";
import { InvalidName, normalizeTags, parseName, parseOwnName } from "../../templates/names.js";
import { parseImageSource } from "../../templates/oci-import.js";
import { type BuildUploads, UploadTooLarge } from "../../templates/uploads.js";
import { ApiError, badRequest, conflict, forbidden, notFound } from "../errors.js";
import type { ApiRequest, Handler, Reply } from "../server.js";
import { teamOf } from "./access.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
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
  /** Where `fromImage` may read OCI layouts and archives from. */
  importDir: string;
  envdVersion: string;
  diskSizeMB: number;
  /** Called before a template's layers go (the warm pool lets go of its sandboxes). */
  beforeDelete?(templateId: string): Promise<void>;
  /** Largest COPY archive accepted. */
  maxUploadBytes: number;
}

const DEFAULT_CPU_COUNT = 2;
const DEFAULT_MEMORY_MB = 1024;
const LEVELS = ["debug", "info", "warn", "error"];

interface NewTemplateBody {
  name?: string;
  alias?: string;
  tags?: string[];
  cpuCount?: number;
  memoryMB?: number;
}

/** Runs `fn`, turning a bad name or build request into the 400 it is. */
function checked<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof InvalidName || err instanceof InvalidBuild) throw badRequest(err.message);
    throw err;
  }
}

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
export function templateRoutes(o: TemplateRoutesOptions): Record<string, Handler> {
  const { store } = o;

  /** The template a path or body names (id, alias, `namespace/alias`, any with `:tag`). */
  async function find(raw: string, team: Team): Promise<TemplateRow> {
    const ref = parseTemplateRef(raw);
    const template = await store.templates.resolveTemplate(ref, team);
    if (!template) throw notFound(`template '${raw}' not found`);
    return template;
  }

  async function readable(raw: string, team: Team): Promise<TemplateRow> {
    const template = await find(raw, team);
    if (template.team_id !== team.id && !template.public)
      throw forbidden(`template '${raw}' belongs to another team`);
    return template;
  }

  async function owned(raw: string, team: Team): Promise<TemplateRow> {
    const template = await find(raw, team);
    if (template.team_id !== team.id)
      throw forbidden(`template '${raw}' belongs to another team; only its team may change it`);
    return template;
  }

  async function ownedBuild(request: ApiRequest) {
    const team = teamOf(request);
    const template = await owned(request.params.templateID as string, team);
    const id = request.params.buildID as string;
    const build = await store.templates.getBuild(id);
    if (!build || build.template_id !== template.id)
      throw notFound(`build ${id} of template '${template.id}' not found`);
    return { team, template, build };
  }

  async function listTemplates(request: ApiRequest, paged: boolean): Promise<Reply> {
    const team = teamOf(request);
    const limit = (request.params.limit as number | undefined) ?? 100;
    const after = paged ? decodeCursor(request.params.nextToken) : undefined;
    const rows = await store.templates.listTemplates(team.id, {
      limit: paged ? limit + 1 : undefined,
      after: after && { createdAt: after[0], id: after[1] },
    });
    const page = paged ? rows.slice(0, limit) : rows;
    const last = page.at(-1);
    const headers: Record<string, string> =
      paged && rows.length > limit && last
        ? { "X-Next-Token": encodeCursor([last.created_at, last.id]) }
        : {};
    const listed = await Promise.all(page.map((t) => presentListedTemplate(store, t)));
    return { status: 200, body: listed.filter((t) => t !== undefined), headers };
  }

  async function createTemplate(request: ApiRequest): Promise<Reply> {
    const team = teamOf(request);
    const body = request.body as NewTemplateBody;
    const raw = body.name ?? body.alias;
    if (!raw) throw badRequest("name is required: the template's name, optionally 'name:tag'");
    const name = checked(() => parseOwnName(raw, team.namespace));
    const requested = checked(() => normalizeTags([...(name.tag ? [name.tag] : []), ...(body.tags ?? [])]));
    const tags = requested.length > 0 ? requested : [DEFAULT_TAG];
    let template = await existingByName(name.namespace, name.alias);
    if (!template) {
      const created = await store.templates.createTemplate(team.id);
      // a concurrent request may have taken the name: then both build that template
      if (await store.templates.addAlias(name.namespace, name.alias, created.id)) template = created;
      else {
        await store.templates.deleteTemplate(created.id);
        template = (await existingByName(name.namespace, name.alias))!;
      }
    }
    const build = await store.templates.createBuild({
      template_id: template.id,
      status: "waiting",
      reason: null,
      finished_at: null,
      cpu_count: body.cpuCount ?? DEFAULT_CPU_COUNT,
      memory_mb: body.memoryMB ?? DEFAULT_MEMORY_MB,
      disk_size_mb: o.diskSizeMB,
      envd_version: o.envdVersion,
      spec: JSON.stringify({ tags }),
      layers: null,
      start_cmd: null,
      ready_cmd: null,
      snapshot_kind: null,
    });
    return {
      status: 202,
      body: {
        templateID: template.id,
        buildID: build.id,
        public: template.public === 1,
        ...(await namesOf(store, template.id)),
        tags,
      },
    };
  }

  async function existingByName(namespace: string, alias: string): Promise<TemplateRow | undefined> {
    const id = await store.templates.aliasTarget(namespace, alias);
    return id ? store.templates.getTemplate(id) : undefined;
  }

  /** What `fromTemplate`/`fromImage` name, checked before the build is queued. */
  async function buildBase(request: BuildStartRequest, team: Team): Promise<BuildBase> {
    if (request.fromImage && request.fromTemplate)
      throw badRequest("set one of fromImage and fromTemplate, not both");
    let ref: string;
    if (request.fromTemplate) {
      ref = request.fromTemplate;
    } else if (request.fromImage) {
      const source = checked(() => parseImageSource(request.fromImage!, o.importDir));
      if (source.kind === "local") return source;
      ref = `${SYSTEM_NAMESPACE}/${BASE_ALIAS}`;
    } else {
      throw badRequest("set fromImage or fromTemplate: what the build starts from");
    }
    const template = await readable(ref, team);
    const tag = parseTemplateRef(ref).tag;
    const build = await store.templates.buildForTag(template.id, tag);
    if (build?.status !== "ready")
      throw notFound(`template '${ref}' has no ready build${tag ? ` tagged '${tag}'` : ""}`);
    return { kind: "template", name: ref, build };
  }

  async function startBuild(request: ApiRequest): Promise<Reply> {
    const { team, build } = await ownedBuild(request);
    if (build.status !== "waiting" || o.builder.has(build.id)) {
      throw conflict(
        `build ${build.id} was already started (${build.status}); request a new build with POST /v3/templates`,
      );
    }
    const body = request.body as BuildStartRequest;
    const steps = checked(() => parseSteps(body.steps ?? []));
    for (const [i, step] of steps.entries()) {
      if (step.type === "COPY" && !(await o.uploads.has(team.id, step.filesHash))) {
        throw badRequest(
          `step ${i + 1} (COPY ${step.src}): its files (${step.filesHash}) were not uploaded; upload them first`,
        );
      }
    }
    const base = await buildBase(body, team);
    const { tags } = JSON.parse(build.spec) as { tags: string[] };
    o.builder.enqueue({ team, build, base, steps, request: body, tags });
    return { status: 202 };
  }

  async function buildStatus(request: ApiRequest): Promise<Reply> {
    const { template, build } = await ownedBuild(request);
    const offset = (request.params.logsOffset as number | undefined) ?? 0;
    const limit = (request.params.limit as number | undefined) ?? 100;
    const level = request.params.level as string | undefined;
    const entries = (await store.templates.logs(build.id, offset, limit)).filter(
      (e) => !level || LEVELS.indexOf(e.level) >= LEVELS.indexOf(level),
    );
    const reason = build.reason
      ? (JSON.parse(build.reason) as { message: string; step?: string })
      : undefined;
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
  }

  async function buildLogs(request: ApiRequest): Promise<Reply> {
    const { build } = await ownedBuild(request);
    const cursor = request.params.cursor as number | undefined;
    if (cursor !== undefined && Number.isNaN(new Date(cursor).getTime())) {
      throw badRequest(`cursor ${cursor} is not a time: send Unix milliseconds`);
    }
    const level = request.params.level as string | undefined;
    const entries = await store.templates.logsByTime(build.id, {
      from: cursor === undefined ? undefined : new Date(cursor).toISOString(),
      direction: (request.params.direction as "forward" | "backward" | undefined) ?? "forward",
      limit: (request.params.limit as number | undefined) ?? 100,
    });
    const shown = entries.filter((e) => !level || LEVELS.indexOf(e.level) >= LEVELS.indexOf(level));
    return { status: 200, body: { logs: shown.map(presentLogEntry) } };
  }

  async function uploadLink(request: ApiRequest): Promise<Reply> {
    const team = teamOf(request);
    const template = await owned(request.params.templateID as string, team);
    const hash = request.params.hash as string;
    const token = o.uploads.token(template.id, hash);
    const url = `${publicBase(request.req)}/templates/${encodeURIComponent(template.id)}/files/${hash}/upload?token=${encodeURIComponent(token)}`;
    return { status: 201, body: { present: await o.uploads.has(team.id, hash), url } };
  }

  async function upload(request: ApiRequest): Promise<Reply> {
    const templateId = request.params.templateID as string;
    const hash = request.params.hash as string;
    if (!o.uploads.verify(templateId, hash, request.params.token as string)) {
      throw forbidden(
        "the upload link is invalid or has expired: ask for a new one (GET /templates/{templateID}/files/{hash})",
      );
    }
    const template = await store.templates.getTemplate(templateId);
    if (!template) throw notFound(`template '${templateId}' not found`);
    try {
      await o.uploads.receive(template.team_id, hash, request.req, o.maxUploadBytes);
    } catch (err) {
      if (err instanceof UploadTooLarge)
        throw new ApiError(413, `${err.message}: split the files over several COPY steps`);
      throw err;
    }
    return { status: 204 };
  }

  async function deleteTemplate(request: ApiRequest): Promise<Reply> {
    const team = teamOf(request);
    const raw = request.params.templateID as string;
    const template = await owned(raw, team);
    const live = await store.templates.liveSandboxCount(template.id);
    if (live > 0)
      throw conflict(`template '${raw}' is used by ${live} sandbox(es), running or paused: kill them first`);
    if ((await store.templates.unfinishedBuildCount(template.id)) > 0) {
      throw conflict(`template '${raw}' has a build in progress: wait for it to finish`);
    }
    await o.beforeDelete?.(template.id);
    const builds = await store.templates.listBuilds(template.id, { limit: Number.MAX_SAFE_INTEGER });
    const layers = new Set(builds.flatMap((b) => JSON.parse(b.layers ?? "[]") as string[]));
    const memoryImages = builds.flatMap((b) => memoryImageOf(b)?.image ?? []);
    await store.templates.deleteTemplate(template.id);
    // layers shared with other templates' builds stay; the rest go with the template
    const stillUsed = await store.templates.referencedLayers();
    await o.layers.remove([...[...layers].filter((l) => !stillUsed.has(l)), ...memoryImages]);
    return { status: 204 };
  }

  async function updateTemplate(request: ApiRequest): Promise<Reply> {
    const template = await owned(request.params.templateID as string, teamOf(request));
    const body = request.body as { public?: boolean };
    await store.templates.updateTemplate(template.id, { public: body.public });
    return { status: 200, body: { names: (await namesOf(store, template.id)).names } };
  }

  return {
    listTemplates: (r) => listTemplates(r, false),
    listTemplatesV2: (r) => listTemplates(r, true),
    createTemplate,
    getTemplateByAlias: async (r) => {
      const team = teamOf(r);
      const raw = r.params.alias as string;
      const name = checked(() => parseName(raw));
      const template = await store.templates.resolveTemplate(
        { namespace: name.namespace, name: name.alias },
        team,
      );
      if (!template) throw notFound(`template '${raw}' not found`);
      if (template.team_id !== team.id && !template.public)
        throw forbidden(`template '${raw}' belongs to another team`);
      return { status: 200, body: { templateID: template.id, public: template.public === 1 } };
    },
    getTemplate: async (r): Promise<Reply> => {
      const template = await readable(r.params.templateID as string, teamOf(r));
      const limit = (r.params.limit as number | undefined) ?? 100;
      const after = decodeCursor(r.params.nextToken);
      const rows = await store.templates.listBuilds(template.id, {
        limit: limit + 1,
        after: after && { createdAt: after[0], id: after[1] },
      });
      const page = rows.slice(0, limit);
      const last = page.at(-1);
      const next = rows.length > limit && last ? encodeCursor([last.created_at, last.id]) : null;
      return {
        status: 200,
        body: await presentTemplateWithBuilds(store, template, page, next),
        headers: next ? { "X-Next-Token": next } : {},
      };
    },
    deleteTemplate,
    updateTemplate,
    updateTemplateV2: updateTemplate,
    listTemplateTags: async (r) => {
      const template = await readable(r.params.templateID as string, teamOf(r));
      const tags = await store.templates.listTags(template.id);
      return {
        status: 200,
        body: tags.map((t) => ({ tag: t.tag, buildID: t.build_id, createdAt: t.created_at })),
      };
    },
    assignTemplateTags: async (r) => {
      const body = r.body as { target: string; tags: string[] };
      const template = await owned(body.target, teamOf(r));
      const tag = checked(() => parseName(body.target)).tag ?? DEFAULT_TAG;
      const tags = checked(() => normalizeTags(body.tags));
      const build = await store.templates.buildForTag(template.id, tag);
      if (!build) throw notFound(`template '${body.target}' has no build tagged '${tag}'`);
      if (build.status !== "ready")
        throw badRequest(
          `build ${build.id} of '${body.target}' is ${build.status}; only ready builds can be tagged`,
        );
      await store.templates.setTags(template.id, build.id, tags);
      return { status: 200, body: { tags, buildID: build.id } };
    },
    deleteTemplateTags: async (r) => {
      const body = r.body as { name: string; tags: string[] };
      const template = await owned(body.name, teamOf(r));
      const tags = checked(() => normalizeTags(body.tags));
      const existing = new Set((await store.templates.listTags(template.id)).map((t) => t.tag));
      const missing = tags.filter((t) => !existing.has(t));
      if (missing.length > 0)
        throw notFound(`template '${body.name}' has no tag ${missing.map((t) => `'${t}'`).join(", ")}`);
      await store.templates.deleteTags(template.id, tags);
      return { status: 204 };
    },
    getTemplateFileUploadLink: uploadLink,
    uploadTemplateFiles: upload,
    startTemplateBuild: startBuild,
    getTemplateBuildStatus: buildStatus,
    getTemplateBuildLogs: buildLogs,
  };
}
