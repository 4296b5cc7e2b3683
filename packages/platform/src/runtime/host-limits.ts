import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { Logger } from "../lib/log.js";
import { SANDBOXES_CGROUP } from "./oci-spec.js";

/** The largest pid_max a 64-bit kernel takes. */
const PID_MAX_LIMIT = 4_194_304;
/** Tasks kept for the host beyond the reach of every sandbox together: a fifth, at least this. */
const HOST_RESERVE_MIN = 4_096;

export interface HostTaskLimits {
  pidMax: number;
  /** Tasks all sandboxes together may hold (the pids limit of their parent cgroup). */
  sandboxTasks: number;
}

async function readInt(file: string): Promise<number | undefined> {
  const n = Number((await readFile(file, "utf8").catch(() => "")).trim());
  return Number.isFinite(n) && n > 0 ? n : undefined;
}

/**
 * Keeps the host able to spawn whatever its sandboxes do: process ids are raised to the
 * kernel's largest (a gVisor task costs several host tasks, and 32,768 ids run out with a few
 * busy sandboxes), and the cgroup above every sandbox may hold all but a reserve of the tasks
 * the kernel allows (pid_max and threads-max), so sandboxes together never take the last ones.
 * Each sandbox's own limit sits below (see sandbox/resource-limits.ts). A host that refuses
 * (no permission) keeps what it has, with a warning.
 */
export async function reserveHostTasks(
  log: Logger,
  o: { procSys?: string; cgroupRoot?: string } = {},
): Promise<HostTaskLimits | undefined> {
  const procSys = o.procSys ?? "/proc/sys/kernel";
  const root = o.cgroupRoot ?? "/sys/fs/cgroup";
  let pidMax = await readInt(join(procSys, "pid_max"));
  const threadsMax = await readInt(join(procSys, "threads-max"));
  if (!pidMax || !threadsMax) return undefined;
  if (pidMax < PID_MAX_LIMIT) {
    try {
      await writeFile(join(procSys, "pid_max"), String(PID_MAX_LIMIT));
      log.info(
        { from: pidMax, to: PID_MAX_LIMIT },
        "raised kernel.pid_max so sandboxes cannot use up the host's process ids",
      );
      pidMax = PID_MAX_LIMIT;
    } catch (err) {
      log.warn({ err, pidMax }, "could not raise kernel.pid_max");
    }
  }
  const allowed = Math.min(pidMax, threadsMax);
  const sandboxTasks = allowed - Math.max(HOST_RESERVE_MIN, Math.ceil(allowed / 5));
  try {
    const unified = await readFile(join(root, "cgroup.controllers"), "utf8").catch(() => undefined);
    if (unified !== undefined) {
      // the root must hand the pids controller down for the limit to exist below it
      const control = await readFile(join(root, "cgroup.subtree_control"), "utf8");
      if (!control.split(/\s+/).includes("pids"))
        await writeFile(join(root, "cgroup.subtree_control"), "+pids");
    }
    const dir = unified !== undefined ? join(root, SANDBOXES_CGROUP) : join(root, "pids", SANDBOXES_CGROUP);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, "pids.max"), String(sandboxTasks));
  } catch (err) {
    log.warn({ err }, "could not limit the tasks of all sandboxes together");
    return { pidMax, sandboxTasks: allowed };
  }
  return { pidMax, sandboxTasks };
}
