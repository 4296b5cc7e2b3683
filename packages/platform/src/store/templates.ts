import { sql } from "kysely";
import { newTemplateId, nowIso } from "../lib/ids.js";
import { SYSTEM_NAMESPACE, type Team } from "../model/team.js";
import {
  type Build,
  DEFAULT_TAG,
  isReservedTemplateName,
  type Template,
  type TemplateRef,
} from "../model/template.js";
import { afterCursor, type KeysetCursor } from "./paging.js";
import type { TemplatesTable } from "./schema.js";
import { decodeBuild, TemplateBuildStore } from "./template-builds.js";

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

/**
 * `store.templates`: templates, their names (aliases) and tags here; their builds, layers and
 * build logs in template-builds.ts.
 */
export class TemplateStore extends TemplateBuildStore {
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

  /** How many templates the team owns, those its snapshots made included. */
  async countTemplates(teamId: string): Promise<number> {
    const row = await this.db
      .selectFrom("templates")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("team_id", "=", teamId)
      .executeTakeFirst();
    return Number(row?.n ?? 0);
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
   * Finds the template a reference names, as the team sees it: `namespace/alias` is that
   * namespace's; otherwise a template id first (ids are random, so no name can shadow one),
   * then an alias as `resolveAlias` finds it. Another team's template is found only by its id
   * or `namespace/alias`; the caller decides whether the team may use it (public or its own).
   */
  async resolveTemplate(ref: TemplateRef, team: Team): Promise<Template | undefined> {
    if (!ref.namespace) {
      const byId = await this.getTemplate(ref.name);
      if (byId) return byId;
    }
    return this.resolveAlias(ref, team);
  }

  /**
   * The template an alias names for the team: `namespace/alias` is that namespace's; a bare
   * alias is the team's own, then the system team's. A reserved name (`base`, the shipped
   * templates) is the system team's first: a team's own row of that name, made before names
   * were reserved, is reached by `namespace/alias` or its id once the system's is installed.
   */
  async resolveAlias(ref: Omit<TemplateRef, "tag">, team: Team): Promise<Template | undefined> {
    const namespaces = ref.namespace
      ? [ref.namespace]
      : isReservedTemplateName(ref.name)
        ? [SYSTEM_NAMESPACE, team.namespace]
        : [team.namespace, SYSTEM_NAMESPACE];
    for (const namespace of namespaces) {
      const id = await this.aliasTarget(namespace, ref.name);
      if (id) return this.getTemplate(id);
    }
    return undefined;
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
}
