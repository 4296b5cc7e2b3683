import type { Schemas } from "@x/platform-client";
import { invalid } from "../../model/errors.js";
import type { ListedSnapshot } from "../../model/snapshot.js";
import { effectiveLimits, type PlatformLimits, type Team } from "../../model/team.js";
import { DEFAULT_TAG, parseTemplateRef } from "../../model/template.js";
import type { Orchestrator } from "../../orchestrator/orchestrator.js";
import { forkSandbox } from "../../snapshots/fork.js";
import { takeSnapshot } from "../../snapshots/snapshot.js";
import type { Store } from "../../store/index.js";
import type { LayerStore } from "../../templates/layers.js";
import { fullName, parseOwnName, withTag } from "../../templates/names.js";
import type { HandlersFor } from "../handler.js";
import { pageOf } from "../paging.js";
import { ownedSandbox, teamOf } from "./access.js";
import { type PresentOptions, presentSandbox } from "./present.js";

export interface SnapshotRoutesOptions extends PresentOptions {
  store: Store;
  orchestrator: Orchestrator;
  layers: LayerStore;
  /** The platform's limits; a team's own may lower them. */
  limits: PlatformLimits;
}

const DEFAULT_FORK_TIMEOUT_SECONDS = 15;

/**
 * Snapshots of sandboxes (memory or files snapshots; see snapshots/snapshot.ts), their list,
 * and forks. Naming (seed 4.2 rule 1): with `name`, `namespace/alias:tag` of the team's template
 * of that name (a new build of it when it exists); without, `<template id>:default` of a new
 * template.
 */
export function snapshotRoutes(
  o: SnapshotRoutesOptions,
): HandlersFor<"createSnapshot" | "listSnapshots" | "forkSandbox"> {
  const { store } = o;
  const deps = { store, orchestrator: o.orchestrator, layers: o.layers };

  async function presentListed(s: ListedSnapshot, team: Team): Promise<Schemas["Snapshot"]> {
    const tag = s.tags.includes(DEFAULT_TAG) ? DEFAULT_TAG : (s.tags[0] ?? DEFAULT_TAG);
    const own = (await store.templates.aliasesOf(s.templateId)).filter((a) => a.namespace === team.namespace);
    const names = own.map((a) => withTag(fullName(a.namespace, a.alias), tag));
    const kind = (await store.templates.getBuild(s.buildId))?.snapshotKind ?? "files";
    return { snapshotID: names[0] ?? withTag(s.templateId, tag), names, kind };
  }

  return {
    createSnapshot: async (r) => {
      const team = teamOf(r);
      const sandbox = await ownedSandbox(store, r);
      const body = r.body ?? {};
      const name = body.name ? parseOwnName(body.name, team.namespace) : undefined;
      const taken = await takeSnapshot(deps, sandbox.id, team, name, {
        memory: body.memory,
        limits: effectiveLimits(team, o.limits),
      });
      const named = name ? withTag(fullName(name.namespace, name.alias), taken.tag) : undefined;
      return {
        status: 200,
        body: {
          snapshotID: named ?? withTag(taken.template.id, taken.tag),
          names: named ? [named] : [],
          kind: taken.build.snapshotKind,
        },
      };
    },

    listSnapshots: async (r) => {
      const team = teamOf(r);
      let templateId: string | undefined;
      let buildId: string | undefined;
      const name = r.params.name;
      if (name) {
        const ref = parseTemplateRef(name);
        const template = await store.templates.resolveTemplate(ref, team);
        if (!template || template.teamId !== team.id) return { status: 200, body: [] };
        templateId = template.id;
        if (ref.tag) {
          const build = await store.templates.buildForTag(template.id, ref.tag);
          if (!build) return { status: 200, body: [] };
          buildId = build.id;
        }
      }
      const filter = { teamId: team.id, sandboxId: r.params.sandboxID, templateId, buildId };
      const page = await pageOf((limit, after) => store.snapshots.list({ ...filter, limit, after }), {
        limit: r.params.limit,
        nextToken: r.params.nextToken,
        keyOf: (s) => ({ time: s.createdAt, id: s.id }),
      });
      const body = await Promise.all(page.items.map((s) => presentListed(s, team)));
      return { status: 200, body, headers: page.headers };
    },

    /** Snapshots the sandbox in place, then starts `count` sandboxes from the snapshot. */
    forkSandbox: async (r) => {
      const team = teamOf(r);
      const source = await ownedSandbox(store, r);
      const body = r.body ?? {};
      const timeout = body.timeout || DEFAULT_FORK_TIMEOUT_SECONDS;
      const limits = effectiveLimits(team, o.limits);
      if (timeout > limits.timeoutSeconds)
        throw invalid(`timeout must be at most ${limits.timeoutSeconds} seconds, got ${timeout}`);
      const count = body.count ?? 1;
      if (count > limits.forkCount)
        throw invalid(
          `count must be at most ${limits.forkCount} (the team's limit of forks per request), got ${count}`,
        );
      const results = await forkSandbox(deps, source, team, {
        count,
        timeoutSeconds: timeout,
        maxLivePerTeam: limits.sandboxes,
        limits,
      });
      return {
        status: 201,
        body: results.map((result) =>
          "sandbox" in result
            ? { sandbox: presentSandbox(result.sandbox, o) }
            : { error: { code: result.error.code === "quota" ? 429 : 500, message: result.error.message } },
        ),
      };
    },
  };
}
