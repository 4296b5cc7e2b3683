import { type Kysely, sql } from "kysely";
import { newBuildId, newTemplateId, nowIso } from "../lib/ids.js";
import type { Team } from "../model/team.js";
import {
  type Build,
  type BuildLogEntry,
  type BuildSpec,
  type BuildStatus,
  DEFAULT_TAG,
  type Template,
  type TemplateRef,
} from "../model/template.js";
import { afterCursor, type KeysetCursor } from "./paging.js";
import type { BuildLogsTable, BuildsTable, Database, TemplatesTable } from "./schema.js";

/** A new build: everything but what the store assigns. */
export type NewBuild = Omit<Build, "id" | "createdAt" | "updatedAt"> & { id?: string };

/** What changes in a build while it is built. */
export type BuildChanges = Partial<Pick<Build, "status" | "reason" | "finishedAt" | "layers" | "spec">>;

export interface TemplateTag {
  tag: string;
  buildId: string;
  createdAt: string;
}

const decodeTemplate = (row: TemplatesTable): Template => ({
  id: row.id,
  teamId: row.team_id,
  public: row.public === 1,
  createdAt: row.created_at,
  updatedAt: row.updated_at,
  lastSpawnedAt: row.last_spawned_at,
  spawnCount: row.spawn_count,
  ...(row.pool_min !== null || row.pool_max !== null
    ? {
        warmPool: {
          ...(row.pool_min !== null ? { min: row.pool_min } : {}),
          ...(row.pool_max !== null ? { max: row.pool_max } : {}),
        },
      }
    : {}),
});

function decodeBuild(row: BuildsTable): Build {
  return {
    id: row.id,
    templateId: row.template_id,
    status: row.status,
    ...(row.reason ? { reason: JSON.parse(row.reason) as Build["reason"] } : {}),
    createdAt: row.created_at,
    updatedAt: row.updated_at,
    ...(row.finished_at ? { finishedAt: row.finished_at } : {}),
    cpuCount: row.cpu_count,
    memoryMB: row.memory_mb,
    diskSizeMB: row.disk_size_mb,
    envdVersion: row.envd_version,
    spec: JSON.parse(row.spec) as BuildSpec,
    layers: row.layers ? (JSON.parse(row.layers) as string[]) : [],
    ...(row.snapshot_kind ? { snapshotKind: row.snapshot_kind as Build["snapshotKind"] } : {}),
  };
}

function encodeBuildChanges(c: BuildChanges): Partial<BuildsTable> {
  return {
    ...(c.status !== undefined ? { status: c.status } : {}),
    ...(c.reason !== undefined ? { reason: JSON.stringify(c.reason) } : {}),
    ...(c.finishedAt !== undefined ? { finished_at: c.finishedAt } : {}),
    ...(c.layers !== undefined ? { layers: JSON.stringify(c.layers) } : {}),
    ...(c.spec !== undefined ? { spec: JSON.stringify(c.spec) } : {}),
  };
}

const decodeLog = (row: Pick<BuildLogsTable, "timestamp" | "level" | "message" | "step">): BuildLogEntry => ({
  timestamp: row.timestamp,
  level: row.level,
  message: row.message,
  ...(row.step ? { step: row.step } : {}),
});

/** Templates, their names (aliases), builds, build logs and tags. */
export class TemplateStore {
  constructor(private readonly db: Kysely<Database>) {}

  /** Runs `fn` in a transaction: this store's own, or the one it already is part of. */
  private atomically<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return this.db.isTransaction ? fn(this.db) : this.db.transaction().execute(fn);
  }

  async createTemplate(teamId: string, opts: { public?: boolean } = {}): Promise<Template> {
    const now = nowIso();
    const row: TemplatesTable = {
      id: newTemplateId(),
      team_id: teamId,
      public: opts.public ? 1 : 0,
      created_at: now,
      updated_at: now,
      last_spawned_at: null,
      spawn_count: 0,
      pool_min: null,
      pool_max: null,
    };
    await this.db.insertInto("templates").values(row).execute();
    return decodeTemplate(row);
  }

  async getTemplate(id: string): Promise<Template | undefined> {
    const row = await this.db.selectFrom("templates").selectAll().where("id", "=", id).executeTakeFirst();
    return row && decodeTemplate(row);
  }

  /**
   * Templates the team owns, and public ones when asked; newest first. `after` is the cursor
   * (created_at and id of the last row seen).
   */
  async listTemplates(
    teamId: string,
    opts: { includePublic?: boolean; limit?: number; after?: KeysetCursor } = {},
  ): Promise<Template[]> {
    let q = this.db.selectFrom("templates").selectAll();
    q = opts.includePublic
      ? q.where((eb) => eb.or([eb("team_id", "=", teamId), eb("public", "=", 1)]))
      : q.where("team_id", "=", teamId);
    const after = opts.after;
    if (after) q = q.where(afterCursor("created_at", after));
    q = q.orderBy("created_at", "desc").orderBy("id");
    return (await (opts.limit === undefined ? q : q.limit(opts.limit)).execute()).map(decodeTemplate);
  }

  /** Sandboxes not yet killed that run from (or were paused from) the template. */
  async liveSandboxCount(templateId: string): Promise<number> {
    const row = await this.db
      .selectFrom("sandboxes")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("template_id", "=", templateId)
      .where("state", "!=", "killed")
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  async updateTemplate(
    id: string,
    changes: { public?: boolean; warmPool?: { min?: number; max?: number } },
  ): Promise<void> {
    await this.db
      .updateTable("templates")
      .set({
        ...(changes.public === undefined ? {} : { public: changes.public ? 1 : 0 }),
        ...(changes.warmPool === undefined
          ? {}
          : { pool_min: changes.warmPool.min ?? null, pool_max: changes.warmPool.max ?? null }),
        updated_at: nowIso(),
      })
      .where("id", "=", id)
      .execute();
  }

  async deleteTemplate(id: string): Promise<void> {
    await this.db.deleteFrom("templates").where("id", "=", id).execute();
  }

  async recordSpawn(id: string): Promise<void> {
    await this.db
      .updateTable("templates")
      .set({ last_spawned_at: nowIso(), spawn_count: sql`spawn_count + 1` })
      .where("id", "=", id)
      .execute();
  }

  /** Adds `namespace/alias` for the template; false when the name is taken by another one. */
  async addAlias(namespace: string, alias: string, templateId: string): Promise<boolean> {
    const existing = await this.aliasTarget(namespace, alias);
    if (existing) return existing === templateId;
    await this.db
      .insertInto("template_aliases")
      .values({ namespace, alias, template_id: templateId })
      .execute();
    return true;
  }

  async aliasTarget(namespace: string, alias: string): Promise<string | undefined> {
    const row = await this.db
      .selectFrom("template_aliases")
      .select("template_id")
      .where("namespace", "=", namespace)
      .where("alias", "=", alias)
      .executeTakeFirst();
    return row?.template_id;
  }

  async aliasesOf(templateId: string): Promise<{ namespace: string; alias: string }[]> {
    return this.db
      .selectFrom("template_aliases")
      .select(["namespace", "alias"])
      .where("template_id", "=", templateId)
      .orderBy("namespace")
      .orderBy("alias")
      .execute();
  }

  /**
   * Finds the template a reference names, as the team sees it: its own `namespace/alias` or
   * alias, then a public template of that alias, then a template id.
   */
  async resolveTemplate(ref: TemplateRef, team: Team): Promise<Template | undefined> {
    if (ref.namespace) {
      const id = await this.aliasTarget(ref.namespace, ref.name);
      return id ? this.getTemplate(id) : undefined;
    }
    const own = await this.aliasTarget(team.namespace, ref.name);
    if (own) return this.getTemplate(own);
    const shared = await this.db
      .selectFrom("template_aliases")
      .innerJoin("templates", "templates.id", "template_aliases.template_id")
      .selectAll("templates")
      .where("template_aliases.alias", "=", ref.name)
      .where("templates.public", "=", 1)
      .orderBy("templates.created_at")
      .executeTakeFirst();
    return shared ? decodeTemplate(shared) : this.getTemplate(ref.name);
  }

  async createBuild(build: NewBuild): Promise<Build> {
    const now = nowIso();
    const row: BuildsTable = {
      id: build.id ?? newBuildId(),
      template_id: build.templateId,
      status: build.status,
      reason: build.reason ? JSON.stringify(build.reason) : null,
      created_at: now,
      updated_at: now,
      finished_at: build.finishedAt ?? null,
      cpu_count: build.cpuCount,
      memory_mb: build.memoryMB,
      disk_size_mb: build.diskSizeMB,
      envd_version: build.envdVersion,
      spec: JSON.stringify(build.spec),
      layers: build.layers.length > 0 ? JSON.stringify(build.layers) : null,
      snapshot_kind: build.snapshotKind ?? null,
    };
    await this.db.insertInto("builds").values(row).execute();
    return decodeBuild(row);
  }

  async getBuild(id: string): Promise<Build | undefined> {
    const row = await this.db.selectFrom("builds").selectAll().where("id", "=", id).executeTakeFirst();
    return row && decodeBuild(row);
  }

  async updateBuild(id: string, changes: BuildChanges): Promise<void> {
    await this.db
      .updateTable("builds")
      .set({ ...encodeBuildChanges(changes), updated_at: nowIso() })
      .where("id", "=", id)
      .execute();
  }

  /** Builds newest first; `after` is the cursor (created_at and id of the last row seen). */
  async listBuilds(templateId: string, opts: { limit: number; after?: KeysetCursor }): Promise<Build[]> {
    let q = this.db.selectFrom("builds").selectAll().where("template_id", "=", templateId);
    const after = opts.after;
    if (after) q = q.where(afterCursor("created_at", after));
    return (await q.orderBy("created_at", "desc").orderBy("id").limit(opts.limit).execute()).map(decodeBuild);
  }

  async countBuilds(templateId: string): Promise<number> {
    const row = await this.db
      .selectFrom("builds")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("template_id", "=", templateId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** The build a tag points at, or for `default`/no tag the newest ready build. */
  async buildForTag(templateId: string, tag = DEFAULT_TAG): Promise<Build | undefined> {
    const tagged = await this.db
      .selectFrom("template_tags")
      .innerJoin("builds", "builds.id", "template_tags.build_id")
      .selectAll("builds")
      .where("template_tags.template_id", "=", templateId)
      .where("template_tags.tag", "=", tag)
      .executeTakeFirst();
    if (tagged || tag !== DEFAULT_TAG) return tagged && decodeBuild(tagged);
    return this.latestBuild(templateId, "ready");
  }

  /** Builds of the template that are queued or running. */
  async unfinishedBuildCount(templateId: string): Promise<number> {
    const row = await this.db
      .selectFrom("builds")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("template_id", "=", templateId)
      .where("status", "in", ["waiting", "building"])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Marks every queued or running build as failed (they cannot outlive the process that ran them). */
  async failUnfinishedBuilds(message: string): Promise<number> {
    const now = nowIso();
    const result = await this.db
      .updateTable("builds")
      .set({ status: "error", reason: JSON.stringify({ message }), finished_at: now, updated_at: now })
      .where("status", "in", ["waiting", "building"])
      .executeTakeFirst();
    return Number(result.numUpdatedRows);
  }

  /** Every layer any build of any template stacks, and every memory image a snapshot keeps. */
  async referencedLayers(): Promise<Set<string>> {
    const rows = await this.db.selectFrom("builds").select(["layers", "spec"]).execute();
    return new Set(
      rows.flatMap((r) => {
        const memory = (JSON.parse(r.spec) as { memory?: { image?: string } }).memory?.image;
        return [...(JSON.parse(r.layers ?? "[]") as string[]), ...(memory ? [memory] : [])];
      }),
    );
  }

  async latestBuild(templateId: string, status?: BuildStatus): Promise<Build | undefined> {
    let q = this.db.selectFrom("builds").selectAll().where("template_id", "=", templateId);
    if (status) q = q.where("status", "=", status);
    const row = await q.orderBy("created_at", "desc").orderBy("id").executeTakeFirst();
    return row && decodeBuild(row);
  }

  async setTags(templateId: string, buildId: string, tags: string[]): Promise<void> {
    const now = nowIso();
    await this.atomically(async (trx) => {
      for (const tag of tags) {
        await trx
          .deleteFrom("template_tags")
          .where("template_id", "=", templateId)
          .where("tag", "=", tag)
          .execute();
        await trx
          .insertInto("template_tags")
          .values({ template_id: templateId, tag, build_id: buildId, created_at: now })
          .execute();
      }
    });
  }

  async deleteTags(templateId: string, tags: string[]): Promise<number> {
    if (tags.length === 0) return 0;
    const result = await this.db
      .deleteFrom("template_tags")
      .where("template_id", "=", templateId)
      .where("tag", "in", tags)
      .executeTakeFirst();
    return Number(result.numDeletedRows);
  }

  async listTags(templateId: string): Promise<TemplateTag[]> {
    const rows = await this.db
      .selectFrom("template_tags")
      .select(["tag", "build_id", "created_at"])
      .where("template_id", "=", templateId)
      .orderBy("tag")
      .execute();
    return rows.map((r) => ({ tag: r.tag, buildId: r.build_id, createdAt: r.created_at }));
  }

  async appendLogs(buildId: string, entries: BuildLogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.atomically(async (trx) => {
      const last = await trx
        .selectFrom("build_logs")
        .select((eb) => eb.fn.max("seq").as("seq"))
        .where("build_id", "=", buildId)
        .executeTakeFirst();
      let seq = Number(last?.seq ?? -1);
      await trx
        .insertInto("build_logs")
        .values(
          entries.map((e) => ({
            build_id: buildId,
            seq: ++seq,
            timestamp: e.timestamp,
            level: e.level,
            message: e.message,
            step: e.step ?? null,
          })),
        )
        .execute();
    });
  }

  /** Log entries from a time on (`forward`, oldest first) or up to it (`backward`, newest first). */
  async logsByTime(
    buildId: string,
    opts: { from?: string; direction: "forward" | "backward"; limit: number },
  ): Promise<BuildLogEntry[]> {
    let q = this.db
      .selectFrom("build_logs")
      .select(["timestamp", "level", "message", "step"])
      .where("build_id", "=", buildId);
    if (opts.from) q = q.where("timestamp", opts.direction === "forward" ? ">=" : "<=", opts.from);
    const order = opts.direction === "forward" ? "asc" : "desc";
    return (await q.orderBy("seq", order).limit(opts.limit).execute()).map(decodeLog);
  }

  async logs(buildId: string, offset: number, limit: number): Promise<BuildLogEntry[]> {
    const rows = await this.db
      .selectFrom("build_logs")
      .select(["timestamp", "level", "message", "step"])
      .where("build_id", "=", buildId)
      .where("seq", ">=", offset)
      .orderBy("seq")
      .limit(limit)
      .execute();
    return rows.map(decodeLog);
  }
}
