import { readFileSync } from "node:fs";

/**
 * The sandbox's own cgroup as runc shows it inside (v1: each controller's directory of this
 * container at /sys/fs/cgroup/<controller>; v2: the container's cgroup namespace at
 * /sys/fs/cgroup). gVisor shows none of it: every reading is then undefined. The files are
 * small kernel files, read at once: cheaper than a trip through libuv's thread pool, and read
 * on every process start and end and twice a second by the watchdog.
 */
function readNow(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

function field(text: string | undefined, key: string): number | undefined {
  const m = text && new RegExp(`^${key} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}

/** v1's and v2's file of OOM kills; which one this sandbox has is found once. */
const OOM_FILES = ["/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"];
let oomFile: string | null | undefined;

/** How many times the kernel's OOM killer has ended a process of this cgroup (read at every start). */
export function oomKills(): number | undefined {
  oomFile ??= OOM_FILES.find((file) => readNow(file) !== undefined) ?? null;
  return oomFile === null ? undefined : field(readNow(oomFile), "oom_kill");
}

/** v1's and v2's directory of the pids controller; which one this sandbox has is found once. */
const PIDS_DIRS = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"];
let pidsDir: string | null | undefined;

/** Tasks in the cgroup and its limit (read twice a second by the watchdog, so synchronously). */
export function pidsUsage(): { current: number; max: number } | undefined {
  const usage = (dir: string) => {
    const current = Number(readNow(`${dir}/pids.current`)?.trim());
    const max = Number(readNow(`${dir}/pids.max`)?.trim());
    return Number.isFinite(current) && Number.isFinite(max) ? { current, max } : undefined;
  };
  if (pidsDir === undefined) pidsDir = PIDS_DIRS.find((dir) => usage(dir) !== undefined) ?? null;
  return pidsDir === null ? undefined : usage(pidsDir);
}
