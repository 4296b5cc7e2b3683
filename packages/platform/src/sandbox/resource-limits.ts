import type { RuntimeName } from "../runtime/container-runtime.js";

/**
 * How a sandbox's memory and process numbers (its template's, or the create's) become limits,
 * per runtime, so that misbehaving code ends itself and not the sandbox (measured on these
 * hosts; see envd's containment/containment.ts for the part inside the sandbox):
 *
 * runc: the sandbox's cgroup holds exactly its memory; the kernel's OOM killer works inside it
 * and picks the largest command (envd raises each to oom_score_adj 1000) over envd and init
 * (0: going lower needs CAP_SYS_RESOURCE, which a platform in a container may lack).
 * The cgroup's task limit is the process limit plus room for envd and init; by default it
 * follows the memory (see defaultProcessLimit).
 *
 * gVisor: the host cgroup also holds the sentry, gofer and ptrace stubs, and an OOM kill there
 * takes one of them and with it the whole sandbox. So the container starts with the workload's
 * memory (what gVisor reports as MemTotal inside), the cgroup is raised by a headroom once it
 * runs, and envd's watchdog keeps the workload under its memory. Processes: every guest task
 * costs several host tasks (measured: ~780 at 50 guest tasks, ~3,800 at 100, over 4,096 at 200),
 * and a host pids limit reached panics the sentry; so the guest's tasks per account are capped
 * (RLIMIT_NPROC, enforced by gVisor for root too) and the host limit is only a backstop.
 */
export interface SandboxLimits {
  /** Memory in the OCI spec: what the workload sees as its total. */
  specMemoryBytes: number;
  /** What the host cgroup allows once the sandbox runs (the spec's value under runc). */
  cgroupMemoryBytes: number;
  /** The host cgroup's task limit. */
  pidsMax: number;
  /** oom_score_adj of the container's init and envd. */
  initOomScoreAdj: number;
  /** envd's containment settings, as environment variables. */
  envdEnv: string[];
}

/**
 * A runc sandbox's tasks by default: one per MiB of memory, between 128 and 4,096. A task of a
 * fork bomb costs ~650 KB of the sandbox's memory (a bash: its anonymous pages, page tables and
 * kernel stack, measured), so a bomb meets this limit with a third of the memory left, while
 * envd can still run and end it; a limit past the memory would have the cgroup's OOM killer
 * end one bash at a time as fast as the bomb replaces it, with everything, envd included,
 * stuck in reclaim (seen at 4,160 tasks in 1 GiB).
 */
export function defaultProcessLimit(runtime: RuntimeName, memoryMB: number): number {
  return runtime === "runsc" ? GVISOR_PROCESS_LIMIT : Math.min(4096, Math.max(128, Math.floor(memoryMB)));
}

/** Tasks per account in a gVisor sandbox (see above). */
const GVISOR_PROCESS_LIMIT = 128;

/** Tasks of envd and tini (threads included) kept beyond a runc sandbox's process limit. */
const ENVD_TASKS = 64;
/** Host tasks a gVisor sandbox may hold: a backstop far above what its capped guest needs. */
const GVISOR_HOST_TASKS = 16_384;
/** Memory gVisor's own processes need on top of the workload's, at least. */
const GVISOR_HEADROOM_MIN_MB = 256;

export function gvisorHeadroomMB(memoryMB: number): number {
  return Math.max(GVISOR_HEADROOM_MIN_MB, Math.ceil(memoryMB / 4));
}

export function sandboxLimits(
  runtime: RuntimeName,
  o: { memoryMB: number; processLimit?: number },
): SandboxLimits {
  const processLimit = o.processLimit ?? defaultProcessLimit(runtime, o.memoryMB);
  const memory = o.memoryMB * 2 ** 20;
  if (runtime === "runc") {
    return {
      specMemoryBytes: memory,
      cgroupMemoryBytes: memory,
      pidsMax: processLimit + ENVD_TASKS,
      initOomScoreAdj: 0,
      envdEnv: [
        `ENVD_MEMORY_LIMIT_MB=${o.memoryMB}`,
        "ENVD_OOM_SCORE_ADJ=1000",
        // what envd watches where the cgroup's own count is not visible inside
        `ENVD_PROCESS_LIMIT=${processLimit}`,
      ],
    };
  }
  return {
    specMemoryBytes: memory,
    cgroupMemoryBytes: memory + gvisorHeadroomMB(o.memoryMB) * 2 ** 20,
    pidsMax: GVISOR_HOST_TASKS,
    // under host memory pressure, sandboxes go before the platform
    initOomScoreAdj: 500,
    envdEnv: [
      `ENVD_MEMORY_LIMIT_MB=${o.memoryMB}`,
      "ENVD_MEMORY_WATCHDOG=1",
      `ENVD_PROCESS_LIMIT=${processLimit}`,
      "ENVD_PROCESS_RLIMIT=1",
    ],
  };
}
