import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/**
 * Changes a container's cgroup limits in place, for cgroup v1 (also the hybrid layout of these
 * hosts: one hierarchy per controller) and v2 (one unified hierarchy, what a fresh Debian 12
 * boots with). The runtime sets the first values from the OCI spec; these change them later.
 */
export interface CgroupLimits {
  /** Memory the cgroup may charge, page cache included; swap is never allowed on top. */
  memoryBytes?: number;
  /** Tasks (threads) the cgroup may hold. */
  pidsMax?: number;
  /** Relative CPU weight against sibling cgroups (v1 cpu.shares scale: 2–262144, 1024 = default). */
  cpuShares?: number;
}

const unifiedRoots = new Map<string, boolean>();

/** Whether the cgroup filesystem at `root` is v2 (one unified hierarchy); looked at once per root. */
export function isUnified(root = "/sys/fs/cgroup"): boolean {
  let unified = unifiedRoots.get(root);
  if (unified === undefined) {
    unified = existsSync(join(root, "cgroup.controllers"));
    unifiedRoots.set(root, unified);
  }
  return unified;
}

/** v2's cpu.weight (1–10000, 100 = default) for a v1 cpu.shares value, as runc and systemd convert. */
export function sharesToWeight(shares: number): number {
  return 1 + Math.floor(((Math.min(262144, Math.max(2, shares)) - 2) * 9999) / 262142);
}

export async function setCgroupLimits(
  cgroupPath: string,
  limits: CgroupLimits,
  root = "/sys/fs/cgroup",
): Promise<void> {
  if (isUnified(root)) {
    const dir = join(root, cgroupPath);
    if (limits.memoryBytes !== undefined) {
      await writeFile(join(dir, "memory.max"), String(limits.memoryBytes));
      await writeFile(join(dir, "memory.swap.max"), "0").catch(() => undefined);
    }
    if (limits.pidsMax !== undefined) await writeFile(join(dir, "pids.max"), String(limits.pidsMax));
    if (limits.cpuShares !== undefined)
      await writeFile(join(dir, "cpu.weight"), String(sharesToWeight(limits.cpuShares)));
    return;
  }
  if (limits.memoryBytes !== undefined) {
    const dir = join(root, "memory", cgroupPath);
    const limit = join(dir, "memory.limit_in_bytes");
    const memsw = join(dir, "memory.memsw.limit_in_bytes");
    const bytes = String(limits.memoryBytes);
    // memory+swap may never be below memory: raise it first when growing, lower it last when shrinking
    const current = Number((await readFile(limit, "utf8")).trim());
    const hasMemsw = existsSync(memsw);
    if (hasMemsw && limits.memoryBytes > current) await writeFile(memsw, bytes);
    await writeFile(limit, bytes);
    if (hasMemsw && limits.memoryBytes <= current) await writeFile(memsw, bytes);
  }
  if (limits.pidsMax !== undefined)
    await writeFile(join(root, "pids", cgroupPath, "pids.max"), String(limits.pidsMax));
  if (limits.cpuShares !== undefined)
    await writeFile(join(root, "cpu", cgroupPath, "cpu.shares"), String(limits.cpuShares));
}

/** What a container's cgroup shows of it while it runs, or afterwards. */
export interface CgroupLife {
  /** Processes in it now; 0 once every one has exited, undefined when no cgroup is there. */
  processes?: number;
  /** Processes the kernel's OOM killer ended in it, where the kernel counts them. */
  oomKills?: number;
}

/** A `key value` line of a cgroup file. */
async function readNumber(file: string, key: string): Promise<number | undefined> {
  const text = await readFile(file, "utf8").catch(() => undefined);
  if (text === undefined) return undefined;
  const m = new RegExp(`^${key} (\\d+)$`, "m").exec(text);
  return m ? Number(m[1]) : undefined;
}

/** Lines of cgroup.procs: there in every cgroup, whichever controllers it has. */
async function processCount(dir: string): Promise<number | undefined> {
  const text = await readFile(join(dir, "cgroup.procs"), "utf8").catch(() => undefined);
  return text === undefined ? undefined : text.split("\n").filter(Boolean).length;
}

/** Processes in a container's cgroup now; 0 once every one has exited, undefined when no cgroup is there. */
export async function cgroupProcesses(
  cgroupPath: string,
  root = "/sys/fs/cgroup",
): Promise<number | undefined> {
  if (isUnified(root)) return processCount(join(root, cgroupPath));
  return (
    (await processCount(join(root, "memory", cgroupPath))) ??
    (await processCount(join(root, "pids", cgroupPath)))
  );
}

export async function cgroupLife(cgroupPath: string, root = "/sys/fs/cgroup"): Promise<CgroupLife> {
  const oomFile = isUnified(root)
    ? join(root, cgroupPath, "memory.events")
    : join(root, "memory", cgroupPath, "memory.oom_control");
  return {
    processes: await cgroupProcesses(cgroupPath, root),
    oomKills: await readNumber(oomFile, "oom_kill"),
  };
}

/** CPU time a cgroup has used since it was made, in nanoseconds; undefined when it is gone. */
export async function cgroupCpuUsageNs(
  cgroupPath: string,
  root = "/sys/fs/cgroup",
): Promise<number | undefined> {
  if (isUnified(root)) {
    const usec = await readNumber(join(root, cgroupPath, "cpu.stat"), "usage_usec");
    return usec === undefined ? undefined : usec * 1000;
  }
  const text = await readFile(join(root, "cpuacct", cgroupPath, "cpuacct.usage"), "utf8").catch(
    () => undefined,
  );
  return text === undefined ? undefined : Number(text.trim());
}
