import type { Kysely } from "kysely";
import { nowIso } from "../lib/ids.js";
import type { IdentityTokens } from "../model/identity.js";
import { type EgressPolicy, type IngressPolicy, OPEN_EGRESS, PUBLIC_INGRESS } from "../model/network.js";
import type { PauseKind, Sandbox, SandboxState } from "../model/sandbox.js";
import type { VolumeMount } from "../model/volume.js";
import { afterCursor, type KeysetCursor } from "./paging.js";
import type { Database, SandboxesTable } from "./schema.js";
import { binding, type Sealing } from "./sealing.js";

export interface SandboxListFilter {
  teamId: string;
  states?: SandboxState[];
  metadata?: Record<string, string>;
  /** Only sandboxes started at or after this time (ISO 8601, UTC, as stored). */
  startedAfter?: string;
  /** Only sandboxes of these templates. */
  templateIds?: string[];
  /** By start time: newest first (the default) or oldest first. */
  order?: "asc" | "desc";
  limit: number;
  /** Cursor: start time and id of the last sandbox of the previous page. */
  after?: KeysetCursor;
}

/** What changes in a sandbox's record over its life. */
export interface SandboxChanges {
  state?: SandboxState;
  /** null clears it (on resume). */
  pauseKind?: PauseKind | null;
  endAt?: string;
  egress?: EgressPolicy;
  killedAt?: string;
  reason?: string | null;
}

/** Where a sandbox is, without its tokens: what a process without the secrets key may read. */
export interface SandboxWhere {
  id: string;
  teamId: string;
  state: SandboxState;
  nodeId: string;
  reason?: string;
}

/** The egress policy as stored: the SOCKS5 proxy's password sealed for this sandbox. */
function encodeEgress(egress: EgressPolicy, id: string, sealing: Sealing): string {
  const proxy = egress.egressProxy;
  if (proxy?.password === undefined) return JSON.stringify(egress);
  return JSON.stringify({
    ...egress,
    egressProxy: { ...proxy, password: sealing.seal(proxy.password, binding.proxyPassword(id)) },
  });
}

function decodeEgress(text: string | null, id: string, sealing: Sealing): EgressPolicy {
  if (!text) return OPEN_EGRESS;
  const egress = JSON.parse(text) as EgressPolicy & { egressProxy?: { password?: unknown } };
  const password = egress.egressProxy?.password as Parameters<Sealing["openPassword"]>[0] | undefined;
  if (egress.egressProxy && password !== undefined)
    egress.egressProxy = { ...egress.egressProxy, password: sealing.openPassword(password, id) };
  return egress;
}

function decode(row: SandboxesTable, sealing: Sealing): Sandbox {
  return {
    id: row.id,
    teamId: row.team_id,
    templateId: row.template_id,
    buildId: row.build_id,
    ...(row.alias ? { alias: row.alias } : {}),
    state: row.state,
    ...(row.pause_kind ? { pauseKind: row.pause_kind } : {}),
    runtime: row.runtime,
    startedAt: row.started_at,
    endAt: row.end_at,
    cpuCount: row.cpu_count,
    memoryMB: row.memory_mb,
    diskSizeMB: row.disk_size_mb,
    metadata: JSON.parse(row.metadata) as Record<string, string>,
    envVars: JSON.parse(row.env_vars) as Record<string, string>,
    envdAccessToken: sealing.open(row.envd_access_token, binding.envdToken(row.id)),
    egress: decodeEgress(row.egress, row.id, sealing),
    ingress: row.ingress ? (JSON.parse(row.ingress) as IngressPolicy) : PUBLIC_INGRESS,
    ...(row.traffic_access_token
      ? { trafficAccessToken: sealing.open(row.traffic_access_token, binding.trafficToken(row.id)) }
      : {}),
    autoPause: row.auto_pause === 1,
    autoPauseMemory: row.auto_pause_memory === 1,
    autoResume: row.auto_resume === 1,
    ...(row.killed_at ? { killedAt: row.killed_at } : {}),
    ...(row.reason ? { reason: row.reason } : {}),
    volumeMounts: row.volume_mounts ? (JSON.parse(row.volume_mounts) as VolumeMount[]) : [],
    ...(row.identity_tokens ? { identityTokens: JSON.parse(row.identity_tokens) as IdentityTokens } : {}),
    nodeId: row.node_id,
  };
}

function encode(s: Sandbox, nodeId: string, sealing: Sealing): SandboxesTable {
  return {
    id: s.id,
    team_id: s.teamId,
    template_id: s.templateId,
    build_id: s.buildId,
    alias: s.alias ?? null,
    state: s.state,
    pause_kind: s.pauseKind ?? null,
    runtime: s.runtime,
    started_at: s.startedAt,
    end_at: s.endAt,
    cpu_count: s.cpuCount,
    memory_mb: s.memoryMB,
    disk_size_mb: s.diskSizeMB,
    metadata: JSON.stringify(s.metadata),
    env_vars: JSON.stringify(s.envVars),
    envd_access_token: sealing.seal(s.envdAccessToken, binding.envdToken(s.id)),
    egress: encodeEgress(s.egress, s.id, sealing),
    ingress: JSON.stringify(s.ingress),
    traffic_access_token: s.trafficAccessToken
      ? sealing.seal(s.trafficAccessToken, binding.trafficToken(s.id))
      : null,
    auto_pause: s.autoPause ? 1 : 0,
    auto_pause_memory: s.autoPauseMemory ? 1 : 0,
    auto_resume: s.autoResume ? 1 : 0,
    killed_at: s.killedAt ?? null,
    reason: s.reason ?? null,
    volume_mounts: s.volumeMounts.length > 0 ? JSON.stringify(s.volumeMounts) : null,
    identity_tokens:
      s.identityTokens && Object.keys(s.identityTokens).length > 0 ? JSON.stringify(s.identityTokens) : null,
    node_id: s.nodeId ?? nodeId,
  };
}

function encodeChanges(id: string, c: SandboxChanges, sealing: Sealing): Partial<SandboxesTable> {
  return {
    ...(c.state !== undefined ? { state: c.state } : {}),
    ...(c.pauseKind !== undefined ? { pause_kind: c.pauseKind } : {}),
    ...(c.endAt !== undefined ? { end_at: c.endAt } : {}),
    ...(c.egress !== undefined ? { egress: encodeEgress(c.egress, id, sealing) } : {}),
    ...(c.killedAt !== undefined ? { killed_at: c.killedAt } : {}),
    ...(c.reason !== undefined ? { reason: c.reason } : {}),
  };
}

/**
 * Sandboxes as the platform knows them; the orchestrator keeps the live side. Reads span every
 * node; what a node adopts and inserts is its own (`nodeId`).
 */
export class SandboxStore {
  private readonly decode: (row: SandboxesTable) => Sandbox;

  constructor(
    private readonly db: Kysely<Database>,
    private readonly nodeId: string,
    /** Its tokens and proxy password are sealed at rest (store/sealing.ts). */
    private readonly sealing: Sealing,
  ) {
    this.decode = (row) => decode(row, sealing);
  }

  async insert(sandbox: Sandbox): Promise<void> {
    await this.db
      .insertInto("sandboxes")
      .values(encode(sandbox, this.nodeId, this.sealing))
      .execute();
  }

  async get(id: string): Promise<Sandbox | undefined> {
    const row = await this.db.selectFrom("sandboxes").selectAll().where("id", "=", id).executeTakeFirst();
    return row && this.decode(row);
  }

  /** Where a sandbox is (its team, state and node), without its tokens: any process may ask. */
  async where(id: string): Promise<SandboxWhere | undefined> {
    const row = await this.db
      .selectFrom("sandboxes")
      .select(["id", "team_id", "state", "node_id", "reason"])
      .where("id", "=", id)
      .executeTakeFirst();
    return (
      row && {
        id: row.id,
        teamId: row.team_id,
        state: row.state,
        nodeId: row.node_id,
        ...(row.reason ? { reason: row.reason } : {}),
      }
    );
  }

  async update(id: string, changes: SandboxChanges): Promise<void> {
    await this.db
      .updateTable("sandboxes")
      .set(encodeChanges(id, changes, this.sealing))
      .where("id", "=", id)
      .execute();
  }

  /**
   * Ends the sandbox of a create its api called off (store/create-tickets.ts), whatever its
   * node does: never handed to anyone, it is not listed or counted from now on, and its node,
   * back, does not adopt it. False when it was ended already.
   */
  async endCalledOff(id: string): Promise<boolean> {
    const result = await this.db
      .updateTable("sandboxes")
      .set({
        state: "killed",
        killed_at: nowIso(),
        reason: "its create was called off: its api lost the node's answer",
      })
      .where("id", "=", id)
      .where("state", "!=", "killed")
      .executeTakeFirst();
    return Number(result.numUpdatedRows) > 0;
  }

  /** This node's sandboxes not killed, for the orchestrator to adopt after a restart. */
  /** The ids of live(), without the tokens (a process without the secrets key may ask). */
  async liveIds(): Promise<string[]> {
    const rows = await this.db
      .selectFrom("sandboxes")
      .select("id")
      .where("node_id", "=", this.nodeId)
      .where("state", "!=", "killed")
      .execute();
    return rows.map((r) => r.id);
  }

  async live(): Promise<Sandbox[]> {
    const rows = await this.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("node_id", "=", this.nodeId)
      .where("state", "!=", "killed")
      .execute();
    return rows.map(this.decode);
  }

  /**
   * A node stopped answering: its sandboxes not killed are lost, with the reason. Their pause
   * kind stays, so the node, back, can tell what each was. Sandboxes in the states of `keep`
   * are left as they are. Returns their ids.
   */
  async markLost(nodeId: string, reason: string, keep: SandboxState[] = []): Promise<string[]> {
    const rows = await this.db
      .updateTable("sandboxes")
      .set({ state: "lost", reason })
      .where("node_id", "=", nodeId)
      .where("state", "not in", ["killed", "lost", ...keep])
      .returning("id")
      .execute();
    return rows.map((r) => r.id);
  }

  /** Where each of these sandboxes runs (ids not found are left out). */
  async nodesOf(ids: string[]): Promise<Map<string, { nodeId: string; state: SandboxState }>> {
    if (ids.length === 0) return new Map();
    const rows = await this.db
      .selectFrom("sandboxes")
      .select(["id", "node_id", "state"])
      .where("id", "in", ids)
      .execute();
    return new Map(rows.map((r) => [r.id, { nodeId: r.node_id, state: r.state }]));
  }

  /**
   * Running sandboxes' envd tokens (of these, when `ids` is given), for a signed URL that names
   * no sandbox (the cluster's proxies).
   */
  async runningTokens(ids?: readonly string[]): Promise<{ id: string; envdAccessToken: string }[]> {
    if (ids?.length === 0) return [];
    let query = this.db
      .selectFrom("sandboxes")
      .select(["id", "envd_access_token"])
      .where("state", "=", "running");
    if (ids) query = query.where("id", "in", [...ids]);
    const rows = await query.execute();
    return rows.map((r) => ({
      id: r.id,
      envdAccessToken: this.sealing.open(r.envd_access_token, binding.envdToken(r.id)),
    }));
  }

  /** The team's sandboxes not killed that mount the volume. */
  async mounting(teamId: string, volumeId: string): Promise<Sandbox[]> {
    // JSON text in both dialects: narrowed by text, then checked decoded
    const rows = await this.db
      .selectFrom("sandboxes")
      .selectAll()
      .where("team_id", "=", teamId)
      .where("state", "!=", "killed")
      .where("volume_mounts", "like", `%${volumeId}%`)
      .execute();
    return rows.map(this.decode).filter((s) => s.volumeMounts.some((m) => m.volumeId === volumeId));
  }

  async countLive(teamId: string): Promise<number> {
    const row = await this.db
      .selectFrom("sandboxes")
      .select((eb) => eb.fn.countAll<string | number>().as("n"))
      .where("team_id", "=", teamId)
      .where("state", "in", ["starting", "running"])
      .executeTakeFirst();
    return Number(row?.n ?? 0);
  }

  /** Sandboxes not killed (of one team, or all), counted by state (the platform's gauges, a team's use). */
  async countByState(teamId?: string): Promise<Partial<Record<SandboxState, number>>> {
    let q = this.db
      .selectFrom("sandboxes")
      .select((eb) => ["state", eb.fn.countAll<string | number>().as("n")])
      .where("state", "!=", "killed");
    if (teamId !== undefined) q = q.where("team_id", "=", teamId);
    const rows = await q.groupBy("state").execute();
    return Object.fromEntries(rows.map((r) => [r.state, Number(r.n)]));
  }

  /** Newest first unless asked otherwise. Metadata is matched in memory: it is JSON text in both dialects. */
  async list(filter: SandboxListFilter): Promise<Sandbox[]> {
    const order = filter.order ?? "desc";
    let q = this.db.selectFrom("sandboxes").selectAll().where("team_id", "=", filter.teamId);
    q = q.where(
      "state",
      "in",
      filter.states?.length ? filter.states : ["running", "paused", "error", "lost"],
    );
    if (filter.startedAfter) q = q.where("started_at", ">=", filter.startedAfter);
    if (filter.templateIds) {
      if (filter.templateIds.length === 0) return [];
      q = q.where("template_id", "in", filter.templateIds);
    }
    const after = filter.after;
    if (after) q = q.where(afterCursor("started_at", after, order));
    q = q.orderBy("started_at", order).orderBy("id");
    const wanted = Object.entries(filter.metadata ?? {});
    if (wanted.length === 0) return (await q.limit(filter.limit).execute()).map(this.decode);
    const out: Sandbox[] = [];
    for (const row of await q.execute()) {
      const sandbox = this.decode(row);
      if (wanted.every(([k, v]) => sandbox.metadata[k] === v)) out.push(sandbox);
      if (out.length === filter.limit) break;
    }
    return out;
  }
}
