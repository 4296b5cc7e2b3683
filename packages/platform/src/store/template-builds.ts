import type { Kysely } from "kysely";
import { newBuildId, nowIso } from "../lib/ids.js";
import type { Build, BuildLogEntry, BuildSpec, BuildStatus } from "../model/template.js";
import { atomically } from "./atomically.js";
import { afterCursor, type KeysetCursor } from "./paging.js";
import type { BuildLogsTable, BuildsTable, Database } from "./schema.js";

/** A new build: everything but what the store assigns. */
export type NewBuild = Omit<Build, "id" | "createdAt" | "updatedAt"> & { id?: string };

/** What changes in a build while it is built. */
export type BuildChanges = Partial<Pick<Build, "status" | "reason" | "finishedAt" | "layers" | "spec">>;

export function decodeBuild(row: BuildsTable): Build {
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
    nodeId: row.node_id,
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

/**
 * The builds of templates, the layers they stack and their logs: the part of `store.templates`
 * that records what was built ({@link TemplateStore} in templates.ts adds templates, their names
 * and tags).
 */
export class TemplateBuildStore {
  constructor(
    protected readonly db: Kysely<Database>,
    /** The node this store speaks for: builds it creates are built there. */
    protected readonly nodeId: string,
  ) {}

  /** Runs `fn` in a transaction: this store's own, or the one it already is part of. */
  protected atomically<T>(fn: (trx: Kysely<Database>) => Promise<T>): Promise<T> {
    return atomically(this.db, fn);
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
      node_id: this.nodeId,
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

  async latestBuild(templateId: string, status?: BuildStatus): Promise<Build | undefined> {
    let q = this.db.selectFrom("builds").selectAll().where("template_id", "=", templateId);
    if (status) q = q.where("status", "=", status);
    const row = await q.orderBy("created_at", "desc").orderBy("id").executeTakeFirst();
    return row && decodeBuild(row);
  }

  /** Marks this node's queued or running builds as failed (they cannot outlive the process that ran them). */
  async failUnfinishedBuilds(message: string): Promise<number> {
    const now = nowIso();
    const result = await this.db
      .updateTable("builds")
      .set({ status: "error", reason: JSON.stringify({ message }), finished_at: now, updated_at: now })
      .where("status", "in", ["waiting", "building"])
      .where("node_id", "=", this.nodeId)
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
