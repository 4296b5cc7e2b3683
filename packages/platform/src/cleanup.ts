/**
 * What a platform process leaves when it ends without stopping (SIGKILL, a crash, the OOM
 * killer), and its removal: warm-pool members (nobody's sandboxes), helper processes, and the
 * firewall table and network leftovers when no sandbox is left to adopt. Users' sandboxes stay
 * for the next start to adopt. Run by the guardian the moment the platform dies (see
 * lib/guardian.ts), by `x cleanup`, and, for what is still there, by the next start.
 */
import { mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { PlatformConfig } from "./config.js";
import type { Logger } from "./lib/log.js";
import { ChildRecords, processStartTime } from "./lib/owned-process.js";
import { createNetworkManager } from "./network/network-manager.js";
import { discardPoolLeftovers } from "./orchestrator/warm-pool.js";
import { availableRuntimes } from "./runtime/available.js";
import { SandboxHost } from "./sandbox/sandbox-host.js";
import { openStore } from "./store/index.js";

export type CleanupConfig = Pick<
  PlatformConfig,
  "dataDir" | "databaseUrl" | "networkPrefix" | "networkCidr" | "allowInternal" | "cluster"
>;

/** Files of one platform (data directory and network prefix) while it runs. */
export function runDirOf(config: Pick<PlatformConfig, "dataDir" | "networkPrefix">): string {
  return path.join(config.dataDir, "run", config.networkPrefix);
}

export function poolRecordDir(config: Pick<PlatformConfig, "dataDir" | "networkPrefix">): string {
  // per network prefix: platforms sharing a data dir never touch each other's members
  return path.join(config.dataDir, "pool", config.networkPrefix);
}

export function childRecords(config: Pick<PlatformConfig, "dataDir" | "networkPrefix">, log: Logger) {
  return new ChildRecords(path.join(runDirOf(config), "children"), log);
}

/** A process named in a pid file, when it still runs (its start time tells a recycled pid apart). */
async function runningOwner(file: string): Promise<number | undefined> {
  try {
    const { pid, startTime } = JSON.parse(await readFile(file, "utf8")) as { pid: number; startTime: string };
    return processStartTime(pid) === startTime ? pid : undefined;
  } catch {
    return undefined;
  }
}

async function claim(file: string): Promise<void> {
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, JSON.stringify({ pid: process.pid, startTime: processStartTime(process.pid) }));
}

/**
 * Marks this process as the platform of its data directory and prefix: refused while another
 * one runs there, and after a cleanup of the last one has finished (it may still be running
 * when the platform is started again right after a kill).
 */
export async function claimRunDir(config: CleanupConfig, log: Logger): Promise<() => Promise<void>> {
  const dir = runDirOf(config);
  const owner = await runningOwner(path.join(dir, "platform.pid"));
  if (owner !== undefined && owner !== process.pid)
    throw new Error(
      `a platform already runs on ${config.dataDir} with network prefix '${config.networkPrefix}' (pid ${owner}): stop it first, or give this one another --data-dir or --network-prefix`,
    );
  for (let waited = 0; (await runningOwner(path.join(dir, "cleanup.pid"))) !== undefined; waited += 200) {
    if (waited === 0) log.info("waiting for the cleanup of the previous run to finish");
    if (waited > 120_000) throw new Error(`the cleanup of ${config.dataDir} (see ${dir}) did not finish`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const file = path.join(dir, "platform.pid");
  await claim(file);
  return () => rm(file, { force: true });
}

export interface CleanupReport {
  /** Helper processes ended, by pid. */
  processes: number[];
  /** Sandboxes no record keeps (a create cut short), removed. */
  orphans: string[];
  /** Sandboxes still there for the next start to adopt (their network stays). */
  sandboxesKept: number;
  /** Whether the platform's firewall table and network leftovers were removed. */
  networkRemoved: boolean;
}

/** Removes what a platform that did not stop left (see the top of this file). */
export async function cleanUpLeftovers(config: CleanupConfig, log: Logger): Promise<CleanupReport> {
  const dir = runDirOf(config);
  const owner = await runningOwner(path.join(dir, "platform.pid"));
  if (owner !== undefined)
    throw new Error(`a platform runs on ${config.dataDir} (pid ${owner}): it cleans up after itself`);
  const mark = path.join(dir, "cleanup.pid");
  await claim(mark);
  try {
    const processes = await childRecords(config, log).endLeftovers();
    const network = createNetworkManager({
      prefix: config.networkPrefix,
      cidr: config.networkCidr,
      allowInternal: config.allowInternal,
    });
    const host = new SandboxHost({
      dataDir: config.dataDir,
      runtimes: await availableRuntimes(config.dataDir),
      network,
      envdDir: "", // nothing is booted here
      log,
    });
    await discardPoolLeftovers(poolRecordDir(config), host, log);
    const store = await openStore({
      dataDir: config.dataDir,
      databaseUrl: config.databaseUrl,
      nodeId: config.cluster?.nodeId,
    });
    try {
      const kept = await store.sandboxes.liveIds();
      // what no record keeps (a create cut short, one its api called off) goes while its
      // network still says it was this platform's, as a start's sweep does
      const orphans = await host.sweepOrphans(new Set(kept));
      // with sandboxes to adopt, their networks and the firewall stay as they are
      if (kept.length === 0) await network.sweep();
      return { processes, orphans, sandboxesKept: kept.length, networkRemoved: kept.length === 0 };
    } finally {
      await store.close();
    }
  } finally {
    await rm(mark, { force: true });
  }
}
