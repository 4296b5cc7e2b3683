import { type Kysely, sql } from "kysely";
import { newBuildId, newTemplateId, nowIso } from "./ids.js";
import { afterCursor } from "./paging.js";
import type { BuildRow, BuildUpdate, Database, NewBuild, Team, TemplateRow } from "./schema.js";

export const DEFAULT_TAG = "default";

/** A parsed template reference: `id`, `alias`, `namespace/alias`, each optionally `:tag`. */
export interface TemplateRef {
  namespace?: string;
  name: string;
  tag?: string;
}

export function parseTemplateRef(ref: string): TemplateRef {
  const colon = ref.lastIndexOf(":");
  const nameAndNs = colon > 0 ? ref.slice(0, colon) : ref;
  const tag = colon > 0 ? ref.slice(colon + 1) : undefined;
  const slash = nameAndNs.indexOf("/");
  return slash > 0
    ? { namespace: nameAndNs.slice(0, slash), name: nameAndNs.slice(slash + 1), tag }
    : { name: nameAndNs, tag };
}

export interface BuildLogRow {
  timestamp: string;
  level: string;
  message: string;
  step: string | null;
}

/** Templates, their names (aliases), builds, build logs and tags. */
export class TemplateStore {
  constructor(private readonly db: Kysely<Database>) {}

  async createTemplate(
    teamId: string,
    opts: { public?: boolean; fromSandboxId?: string } = {},
  ): Promise<TemplateRow> {
    const now = nowIso();
    const row: TemplateRow = {
      id: newTemplateId(),
      team_id: teamId,
      public: opts.public ? 1 : 0,
      created_at: now,
      updated_at: now,
      last_spawned_at: null,
      spawn_count: 0,
      from_sandbox_id: opts.fromSandboxId ?? null,
    };
    await this.db.insertInto("templates").values(row).execute();
    return row;
  }

  async getTemplate(id: string): Promise<TemplateRow | undefined> {
    return this.db.selectFrom("templates").selectAll().where("id", "=", id).executeTakeFirst();
  }

  /**
   * Templates the team owns, and public ones when asked; newest first. `after` is the cursor
   * (created_at and id of the last row seen).
   */
  async listTemplates(
    teamId: string,
    opts: { includePublic?: boolean; limit?: number; after?: { createdAt: string; id: string } } = {},
  ): Promise<TemplateRow[]> {
    let q = this.db.selectFrom("templates").selectAll();
    q = opts.includePublic
      ? q.where((eb) => eb.or([eb("team_id", "=", teamId), eb("public", "=", 1)]))
      : q.where("team_id", "=", teamId);
    const after = opts.after;
    if (after) q = q.where(afterCursor("created_at", { time: after.createdAt, id: after.id }));
    q = q.orderBy("created_at", "desc").orderBy("id");
    return opts.limit === undefined ? q.execute() : q.limit(opts.limit).execute();
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

  async updateTemplate(id: string, changes: { public?: boolean }): Promise<void> {
    await this.db
      .updateTable("templates")
      .set({
        ...(changes.public === undefined ? {} : { public: changes.public ? 1 : 0 }),
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
  async resolveTemplate(ref: TemplateRef, team: Team): Promise<TemplateRow | undefined> {
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
    return shared ?? this.getTemplate(ref.name);
  }

  async createBuild(
    build: Omit<NewBuild, "id" | "created_at" | "updated_at"> & { id?: string },
  ): Promise<BuildRow> {
    const now = nowIso();
    const row = { ...build, id: build.id ?? newBuildId(), created_at: now, updated_at: now } as BuildRow;
    await this.db.insertInto("builds").values(row).execute();
    return row;
  }

  async getBuild(id: string): Promise<BuildRow | undefined> {
    return this.db.selectFrom("builds").selectAll().where("id", "=", id).executeTakeFirst();
  }

  async updateBuild(id: string, changes: BuildUpdate): Promise<void> {
    await this.db
      .updateTable("builds")
      .set({ ...changes, updated_at: nowIso() })
      .where("id", "=", id)
      .execute();
  }

  /** Builds newest first; `after` is the cursor (created_at and id of the last row seen). */
  async listBuilds(
    templateId: string,
    opts: { limit: number; after?: { createdAt: string; id: string } },
  ): Promise<BuildRow[]> {
    let q = this.db.selectFrom("builds").selectAll().where("template_id", "=", templateId);
    const after = opts.after;
    if (after) q = q.where(afterCursor("created_at", { time: after.createdAt, id: after.id }));
    return q.orderBy("created_at", "desc").orderBy("id").limit(opts.limit).execute();
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
  async buildForTag(templateId: string, tag = DEFAULT_TAG): Promise<BuildRow | undefined> {
    const tagged = await this.db
      .selectFrom("template_tags")
      .innerJoin("builds", "builds.id", "template_tags.build_id")
      .selectAll("builds")
      .where("template_tags.template_id", "=", templateId)
      .where("template_tags.tag", "=", tag)
      .executeTakeFirst();
    if (tagged || tag !== DEFAULT_TAG) return tagged;
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

  /** Every layer any build of any template stacks (JSON `layers` of all builds). */
  async referencedLayers(): Promise<Set<string>> {
    const rows = await this.db
      .selectFrom("builds")
      .select("layers")
      .where("layers", "is not", null)
      .execute();
    return new Set(rows.flatMap((r) => JSON.parse(r.layers ?? "[]") as string[]));
  }

  async latestBuild(templateId: string, status?: BuildRow["status"]): Promise<BuildRow | undefined> {
    let q = this.db.selectFrom("builds").selectAll().where("template_id", "=", templateId);
    if (status) q = q.where("status", "=", status);
    return q.orderBy("created_at", "desc").orderBy("id").executeTakeFirst();
  }

  async setTags(templateId: string, buildId: string, tags: string[]): Promise<void> {
    const now = nowIso();
    await this.db.transaction().execute(async (trx) => {
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

  async listTags(templateId: string): Promise<{ tag: string; build_id: string; created_at: string }[]> {
    return this.db
      .selectFrom("template_tags")
      .select(["tag", "build_id", "created_at"])
      .where("template_id", "=", templateId)
      .orderBy("tag")
      .execute();
  }

  async appendLogs(buildId: string, entries: BuildLogRow[]): Promise<void> {
    if (entries.length === 0) return;
    await this.db.transaction().execute(async (trx) => {
      const last = await trx
        .selectFrom("build_logs")
        .select((eb) => eb.fn.max("seq").as("seq"))
        .where("build_id", "=", buildId)
        .executeTakeFirst();
      let seq = Number(last?.seq ?? -1);
      await trx
        .insertInto("build_logs")
        .values(entries.map((e) => ({ build_id: buildId, seq: ++seq, ...e })))
        .execute();
    });
  }

  /** Log entries from a time on (`forward`, oldest first) or up to it (`backward`, newest first). */
  async logsByTime(
    buildId: string,
    opts: { from?: string; direction: "forward" | "backward"; limit: number },
  ): Promise<BuildLogRow[]> {
    let q = this.db
      .selectFrom("build_logs")
      .select(["timestamp", "level", "message", "step"])
      .where("build_id", "=", buildId);
    if (opts.from) q = q.where("timestamp", opts.direction === "forward" ? ">=" : "<=", opts.from);
    const order = opts.direction === "forward" ? "asc" : "desc";
    return q.orderBy("seq", order).limit(opts.limit).execute();
  }

  async logs(buildId: string, offset: number, limit: number): Promise<BuildLogRow[]> {
    return this.db
      .selectFrom("build_logs")
      .select(["timestamp", "level", "message", "step"])
      .where("build_id", "=", buildId)
      .where("seq", ">=", offset)
      .orderBy("seq")
      .limit(limit)
      .execute();
  }
}
