import { crashPoint } from "../lib/crash-point.js";
import { DomainError } from "../model/errors.js";
import type { Sandbox } from "../model/sandbox.js";
import type { Team } from "../model/team.js";
import { type SnapshotDeps, takeSnapshot } from "./snapshot.js";

export interface ForkOptions {
  count: number;
  timeoutSeconds: number;
  maxLivePerTeam: number;
}

/** One fork's outcome: its sandbox, or why it could not start (the others still may have). */
export type ForkResult = { sandbox: Sandbox } | { error: { code: "quota" | "failed"; message: string } };

/**
 * Forks a sandbox: snapshots it in place (memory too, where it can be checkpointed), then
 * starts `count` sandboxes from the snapshot with its metadata, network setting and runtime.
 */
export async function forkSandbox(
  deps: SnapshotDeps,
  source: Sandbox,
  team: Team,
  opts: ForkOptions,
): Promise<ForkResult[]> {
  const { template, build } = await takeSnapshot(deps, source.id, team);
  const results: ForkResult[] = [];
  for (let i = 0; i < opts.count; i++) {
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
      });
      results.push({ sandbox });
      crashPoint("fork:one-created");
    } catch (err) {
      const quota = err instanceof DomainError && err.code === "quota";
      results.push({
        error: {
          code: quota ? "quota" : "failed",
          message: err instanceof Error ? err.message : String(err),
        },
      });
    }
  }
  return results;
}
