import { readFile } from "node:fs/promises";
import path from "node:path";
import { cgroupCpuUsageNs, isUnified } from "../runtime/cgroup-limits.js";

/** Cumulative counters and current levels of one container's cgroup. */
export interface CgroupStats {
  /** CPU time used since the cgroup was made, nanoseconds. */
  cpuUsageNs: number;
  /** Memory in use, reclaimable page cache excluded (what `docker stats` shows). */
  memUsed: number;
  /** Page cache, bytes. */
  memCache: number;
  /** The memory limit, undefined when unlimited. */
  memLimit?: number;
}

/** Anything at or above this is the "no limit" value of cgroup v1 (a page-rounded 2^63). */
const V1_UNLIMITED = 2 ** 62;

function statFields(text: string): Map<string, number> {
  const fields = new Map<string, number>();
  for (const line of text.split("\n")) {
    const [key, value] = line.split(" ");
    if (key && value !== undefined) fields.set(key, Number(value));
  }
  return fields;
}

async function readNumber(file: string): Promise<number> {
  return Number((await readFile(file, "utf8")).trim());
}

type MemoryStats = Omit<CgroupStats, "cpuUsageNs">;

/** cgroup v1 (also the hybrid layout of these hosts): one hierarchy per controller. */
async function readV1(root: string, cgroup: string): Promise<MemoryStats> {
  const memory = path.join(root, "memory", cgroup);
  const [memUsage, stat, limit] = await Promise.all([
    readNumber(path.join(memory, "memory.usage_in_bytes")),
    readFile(path.join(memory, "memory.stat"), "utf8").then(statFields),
    readNumber(path.join(memory, "memory.limit_in_bytes")),
  ]);
  const inactiveFile = stat.get("total_inactive_file") ?? 0;
  return {
    memUsed: Math.max(0, memUsage - inactiveFile),
    memCache: stat.get("total_cache") ?? 0,
    memLimit: limit >= V1_UNLIMITED ? undefined : limit,
  };
}

/** cgroup v2: one unified hierarchy. */
async function readV2(root: string, cgroup: string): Promise<MemoryStats> {
  const dir = path.join(root, cgroup);
  const [current, stat, max] = await Promise.all([
    readNumber(path.join(dir, "memory.current")),
    readFile(path.join(dir, "memory.stat"), "utf8").then(statFields),
    readFile(path.join(dir, "memory.max"), "utf8"),
  ]);
  const inactiveFile = stat.get("inactive_file") ?? 0;
  return {
    memUsed: Math.max(0, current - inactiveFile),
    memCache: stat.get("file") ?? 0,
    memLimit: max.trim() === "max" ? undefined : Number(max),
  };
}

/**
 * Reads a container's cgroup (`cgroupsPath` of its OCI spec, e.g. `/x/<id>`) under `root`.
 * undefined when the cgroup does not exist, i.e. the container is not running.
 */
export async function readCgroupStats(
  cgroup: string,
  root = "/sys/fs/cgroup",
): Promise<CgroupStats | undefined> {
  // CPU as the CPU fairness reads it; none means no cgroup
  const cpuUsageNs = await cgroupCpuUsageNs(cgroup, root);
  if (cpuUsageNs === undefined) return undefined;
  try {
    return { cpuUsageNs, ...(await (isUnified(root) ? readV2(root, cgroup) : readV1(root, cgroup))) };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT") return undefined;
    throw err;
  }
}
