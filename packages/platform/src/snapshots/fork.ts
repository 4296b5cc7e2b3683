import { crashPoint } from "../lib/crash-point.js";
import { DomainError } from "../model/errors.js";
import type { Sandbox } from "../model/sandbox.js";
import type { Team } from "../model/team.js";
import type { Build, Template } from "../model/template.js";
import type { QuotaHold } from "../orchestrator/orchestrator.js";
import { type SnapshotDeps, type TakeSnapshotOptions, takeSnapshot } from "./snapshot.js";

export interface ForkOptions {
  count: number;
  timeoutSeconds: number;
  maxLivePerTeam: number;
  /** What the team may hold: a fork takes a snapshot. */
  limits: TakeSnapshotOptions["limits"];
}

/** One fork's outcome: its sandbox, or why it could not start (the others still may have). */
export type ForkResult = { sandbox: Sandbox } | { error: { code: "quota" | "failed"; message: string } };

/**
 * Forks a sandbox: the `count` forks are counted against the team's quota first (a `quota`
 * error, before anything is done, when they do not all fit); then it is snapshotted in place
 * (memory too, where it can be checkpointed), and `count` sandboxes start from the snapshot
 * with its metadata, network setting and runtime. `count` is bounded by the caller (the API's
 * limit): one result is kept per fork.
 */
export async function forkSandbox(
  deps: SnapshotDeps,
  source: Sandbox,
  team: Team,
  opts: ForkOptions,
): Promise<ForkResult[]> {
  const hold = await deps.orchestrator.holdQuota(team.id, opts.count, opts.maxLivePerTeam);
  try {
    const { template, build } = await takeSnapshot(deps, source.id, team, undefined, { limits: opts.limits });
    const results: ForkResult[] = [];
    for (let i = 0; i < opts.count; i++)
      results.push(await forkOne(deps, source, team, template, build, opts, hold));
    return results;
  } finally {
    hold.releaseAll();
  }
}

async function forkOne(
  deps: SnapshotDeps,
  source: Sandbox,
  team: Team,
  template: Template,
  build: Build,
  opts: ForkOptions,
  hold: QuotaHold,
): Promise<ForkResult> {
  try {
    const sandbox = await deps.orchestrator.create({
      team,
      template,
      build,
      timeoutSeconds: opts.timeoutSeconds,
      metadata: source.metadata,
      envVars: {},
      egress: source.egress,
      ingress: source.ingress,
      autoPause: false,
      autoPauseMemory: true,
      autoResume: false,
      runtime: source.runtime,
      // a fork continues its source: the same volumes, shared, at the same paths
      volumeMounts: source.volumeMounts,
      // and carries its identity: the same tokens, minted for the fork's own id
      identityTokens: source.identityTokens,
      maxLivePerTeam: opts.maxLivePerTeam,
      quotaHold: hold,
    });
    crashPoint("fork:one-created");
    return { sandbox };
  } catch (err) {
    const quota = err instanceof DomainError && err.code === "quota";
    return {
      error: {
        code: quota ? "quota" : "failed",
        message: err instanceof Error ? err.message : String(err),
      },
    };
  }
}
