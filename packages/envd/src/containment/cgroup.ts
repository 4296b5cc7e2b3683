import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";

/**
 * The sandbox's own cgroup as runc shows it inside (v1: each controller's directory of this
 * container at /sys/fs/cgroup/<controller>; v2: the container's cgroup namespace at
 * /sys/fs/cgroup). gVisor shows none of it: every reading is then undefined.
 */
async function readText(file: string): Promise<string | undefined> {
  return readFile(file, "utf8").catch(() => undefined);
}

function field(text: string | undefined, key: string): number | undefined {
  const m = text && new RegExp(`^${key} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}

/** v1's and v2's file of OOM kills; which one this sandbox has is found once. */
const OOM_FILES = ["/sys/fs/cgroup/memory/memory.oom_control", "/sys/fs/cgroup/memory.events"];
let oomFile: Promise<string | undefined> | undefined;

/** How many times the kernel's OOM killer has ended a process of this cgroup (read at every start). */
export async function oomKills(): Promise<number | undefined> {
  oomFile ??= (async () => {
    for (const file of OOM_FILES) if ((await readText(file)) !== undefined) return file;
    return undefined;
  })();
  const file = await oomFile;
  return file === undefined ? undefined : field(await readText(file), "oom_kill");
}

/** v1's and v2's directory of the pids controller; which one this sandbox has is found once. */
const PIDS_DIRS = ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"];
let pidsDir: string | null | undefined;

/** A small kernel file, read at once: cheaper than a trip through libuv's thread pool for a watchdog's tick. */
function readNow(file: string): string | undefined {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return undefined;
  }
}

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
