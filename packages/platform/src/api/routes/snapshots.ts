import { type Orchestrator, SandboxQuotaExceeded } from "../../orchestrator/orchestrator.js";
import {
  DEFAULT_TAG,
  type ListedSnapshot,
  parseTemplateRef,
  type Store,
  type Team,
} from "../../store/index.js";
import type { LayerStore } from "../../templates/layers.js";
import { fullName, InvalidName, parseOwnName, withTag } from "../../templates/names.js";
import { takeSnapshot } from "../../templates/snapshot.js";
import { badRequest } from "../errors.js";
import type { ApiRequest, Handler, Reply } from "../server.js";
import { orchestratorAction as act, ownedSandbox, teamOf } from "./access.js";
import { decodeCursor, encodeCursor } from "./cursor.js";
import { type PresentOptions, parseJsonObject, presentSandbox } from "./present.js";

export interface SnapshotRoutesOptions extends PresentOptions {
  store: Store;
  orchestrator: Orchestrator;
  layers: LayerStore;
  maxSandboxesPerTeam: number;
  maxTimeoutSeconds: number;
}

const DEFAULT_FORK_TIMEOUT_SECONDS = 15;

function parseSnapshotName(raw: string, team: Team) {
  try {
    return parseOwnName(raw, team.namespace);
  } catch (err) {
    if (err instanceof InvalidName) throw badRequest(err.message);
    throw err;
  }
}

/**
 * Snapshots of sandboxes (memory or files snapshots; see templates/snapshot.ts), their list, and forks.
 * Naming (seed 4.2 rule 1): with `name`, `namespace/alias:tag` of the team's template of that
 * name (a new build of it when it exists); without, `<template id>:default` of a new template.
 */
export function snapshotRoutes(o: SnapshotRoutesOptions): Record<string, Handler> {
  const { store } = o;
  const deps = { store, orchestrator: o.orchestrator, layers: o.layers };

  async function presentListed(s: ListedSnapshot, team: Team) {
    const tag = s.tags.includes(DEFAULT_TAG) ? DEFAULT_TAG : (s.tags[0] ?? DEFAULT_TAG);
    const own = (await store.templates.aliasesOf(s.template_id)).filter(
      (a) => a.namespace === team.namespace,
    );
    const names = own.map((a) => withTag(fullName(a.namespace, a.alias), tag));
    const kind = (await store.templates.getBuild(s.build_id))?.snapshot_kind ?? "files";
    return { snapshotID: names[0] ?? withTag(s.template_id, tag), names, kind };
  }

  async function createSnapshot(request: ApiRequest): Promise<Reply> {
    const team = teamOf(request);
    const row = await ownedSandbox(store, request);
    const body = (request.body as { name?: string; memory?: boolean } | undefined) ?? {};
    const name = body.name ? parseSnapshotName(body.name, team) : undefined;
    const taken = await act(() => takeSnapshot(deps, row.id, team, name, { memory: body.memory }));
    const named = name ? withTag(fullName(name.namespace, name.alias), taken.tag) : undefined;
    return {
      status: 200,
      body: {
        snapshotID: named ?? withTag(taken.template.id, taken.tag),
        names: named ? [named] : [],
        kind: taken.build.snapshot_kind,
      },
    };
  }

  async function listSnapshots(request: ApiRequest): Promise<Reply> {
    const team = teamOf(request);
    const limit = (request.params.limit as number | undefined) ?? 100;
    const after = decodeCursor(request.params.nextToken);
    let templateId: string | undefined;
    let buildId: string | undefined;
    const name = request.params.name as string | undefined;
    if (name) {
      const ref = parseTemplateRef(name);
      const template = await store.templates.resolveTemplate(ref, team);
      if (!template || template.team_id !== team.id) return { status: 200, body: [] };
      templateId = template.id;
      if (ref.tag) {
        const build = await store.templates.buildForTag(template.id, ref.tag);
        if (!build) return { status: 200, body: [] };
        buildId = build.id;
      }
    }
    const rows = await store.snapshots.list({
      teamId: team.id,
      sandboxId: request.params.sandboxID as string | undefined,
      templateId,
      buildId,
      limit: limit + 1,
      after: after && { createdAt: after[0], id: after[1] },
    });
    const page = rows.slice(0, limit);
    const last = page.at(-1);
    const headers: Record<string, string> =
      rows.length > limit && last ? { "X-Next-Token": encodeCursor([last.created_at, last.id]) } : {};
    return { status: 200, body: await Promise.all(page.map((s) => presentListed(s, team))), headers };
  }

  /** Snapshots the sandbox in place, then starts `count` sandboxes from the snapshot. */
  async function forkSandbox(request: ApiRequest): Promise<Reply> {
    const team = teamOf(request);
    const row = await ownedSandbox(store, request);
    const body = (request.body as { count?: number; timeout?: number } | undefined) ?? {};
    const timeout = body.timeout || DEFAULT_FORK_TIMEOUT_SECONDS;
    if (timeout > o.maxTimeoutSeconds)
      throw badRequest(`timeout must be at most ${o.maxTimeoutSeconds} seconds, got ${timeout}`);
    const count = body.count ?? 1;
    const { template, build } = await act(() => takeSnapshot(deps, row.id, team));
    const results = [];
    for (let i = 0; i < count; i++) {
      try {
        const fork = await o.orchestrator.create({
          team,
          template,
          build,
          timeoutSeconds: timeout,
          metadata: parseJsonObject(row.metadata),
          envVars: {},
          allowInternet: row.allow_internet === 1,
          autoPause: false,
          autoResume: false,
          runtime: row.runtime,
          maxLivePerTeam: o.maxSandboxesPerTeam,
        });
        results.push({ sandbox: presentSandbox(fork, o) });
      } catch (err) {
        const status = err instanceof SandboxQuotaExceeded ? 429 : 500;
        results.push({ error: { code: status, message: err instanceof Error ? err.message : String(err) } });
      }
    }
    return { status: 201, body: results };
  }

  return { createSnapshot, listSnapshots, forkSandbox };
}
