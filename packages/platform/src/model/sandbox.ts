import { type DomainError, unavailable } from "./errors.js";
import type { IdentityTokens } from "./identity.js";
import type { EgressPolicy, IngressPolicy } from "./network.js";
import type { VolumeMount } from "./volume.js";

/** Where a sandbox runs: gVisor (`runsc`, the default) or `runc`. */
export type RuntimeName = "runc" | "runsc";

/**
 * `error`: it stopped working by itself (its agent, envd, died); `lost`: its node stopped
 * answering (beyond one machine), until the node comes back. See `Sandbox.reason` for both.
 */
export type SandboxState = "starting" | "running" | "paused" | "error" | "lost" | "killed";

/**
 * How deep a paused sandbox sleeps: frozen (memory kept in RAM, instant resume), checkpointed
 * (memory on disk, processes continue on resume), stopped (files kept, processes restart).
 */
export type PauseKind = "frozen" | "checkpointed" | "stopped";

/** A sandbox as the platform records it. */
export interface Sandbox {
  id: string;
  teamId: string;
  templateId: string;
  buildId: string;
  /** The template name the create asked for, when it named one. */
  alias?: string;
  state: SandboxState;
  /** Set while paused. */
  pauseKind?: PauseKind;
  runtime: RuntimeName;
  startedAt: string;
  /** When the sandbox times out (ISO time). */
  endAt: string;
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  metadata: Record<string, string>;
  /** The template's environment with the create's on top. */
  envVars: Record<string, string>;
  envdAccessToken: string;
  egress: EgressPolicy;
  ingress: IngressPolicy;
  /** Needed on the sandbox's URLs (all ports but envd's) when `ingress.allowPublicTraffic` is false. */
  trafficAccessToken?: string;
  /** On timeout: pause instead of kill. */
  autoPause: boolean;
  /** With `autoPause`: keep memory (a frozen pause) or only files (a stopped one). */
  autoPauseMemory: boolean;
  /** Traffic through the proxy resumes it when paused. */
  autoResume: boolean;
  killedAt?: string;
  /** Why a sandbox in state `error` broke. */
  reason?: string;
  /** Volumes bound into it, kept over pause and resume. */
  volumeMounts: VolumeMount[];
  /** Workload identity tokens its egress may carry, by name (`iam.tokens`); never shown by the API. */
  identityTokens?: IdentityTokens;
  /** The node that runs it (`local` under `x serve`). */
  nodeId?: string;
}

/** Live means not killed: starting, running or paused. */
export function isLive(sandbox: Sandbox | undefined): sandbox is Sandbox {
  return sandbox !== undefined && sandbox.state !== "killed";
}

/** The answer for a sandbox whose node stopped answering: it may come back with its node. */
export function lostSandbox(sandbox: Pick<Sandbox, "id" | "reason">): DomainError {
  return unavailable(
    `sandbox ${sandbox.id} is lost: ${sandbox.reason ?? "its node stopped answering"}; it is back when its node is, or kill it to forget it`,
    5,
  );
}
