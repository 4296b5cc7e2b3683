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

/** Tasks in the cgroup and its limit. */
export async function pidsUsage(): Promise<{ current: number; max: number } | undefined> {
  for (const dir of ["/sys/fs/cgroup/pids", "/sys/fs/cgroup"]) {
    const current = Number((await readText(`${dir}/pids.current`))?.trim());
    const max = Number((await readText(`${dir}/pids.max`))?.trim());
    if (Number.isFinite(current) && Number.isFinite(max)) return { current, max };
  }
  return undefined;
}
