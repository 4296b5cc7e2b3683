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

/** How many times the kernel's OOM killer has ended a process of this cgroup. */
export async function oomKills(): Promise<number | undefined> {
  return (
    field(await readText("/sys/fs/cgroup/memory/memory.oom_control"), "oom_kill") ??
    field(await readText("/sys/fs/cgroup/memory.events"), "oom_kill")
  );
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
