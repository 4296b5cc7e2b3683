import { statfs } from "node:fs/promises";
import os from "node:os";
import { FORK_COUNT_CEILING, LIMIT_DEFAULTS, type PlatformConfig } from "./config.js";
import type { PlatformLimits } from "./model/team.js";

/** What the host has, which the limits of one sandbox and one volume are measured against. */
export interface HostSize {
  cores: number;
  memoryMB: number;
  /** Size of the filesystem the data directory is on. */
  diskMB: number;
}

/** Most capacity of one volume unless the operator says otherwise: 64 GiB. */
const VOLUME_SIZE_CAP_MB = 64 * 1024;

export async function hostSize(dataDir: string): Promise<HostSize> {
  const fs = await statfs(dataDir);
  return {
    cores: os.availableParallelism(),
    memoryMB: Math.floor(os.totalmem() / 2 ** 20),
    diskMB: Math.floor((fs.blocks * fs.bsize) / 2 ** 20),
  };
}

/**
 * The platform's limits of every team, finite, each the operator's where given. The defaults
 * that depend on the host:
 * - vCPUs of one sandbox: the host's cores, at least 2 (the base template's and E2B's
 *   default). A sandbox's vCPUs are a CFS quota: more than the cores buys nothing.
 * - memory of one sandbox: half the host's, at least 1024 MiB. Memory is a cgroup limit, not a
 *   reservation: one sandbox allowed more could drive its neighbours and the platform into the
 *   OOM killer alone.
 * - capacity of one volume: 64 GiB, or the data directory's whole disk when smaller. Volumes
 *   are sparse images that overcommit the disk; one larger than the disk could only ever end
 *   in the host's ENOSPC, never in its own.
 */
export function platformLimits(config: PlatformConfig, host: HostSize): PlatformLimits {
  return {
    sandboxes: config.maxSandboxesPerTeam,
    timeoutSeconds: config.maxTimeoutSeconds,
    diskSizeMB: config.diskSizeMB,
    cpuCount: config.maxCpuCount ?? Math.max(2, host.cores),
    memoryMB: config.maxMemoryMB ?? Math.max(1024, Math.floor(host.memoryMB / 2)),
    volumeSizeMB: config.maxVolumeSizeMB ?? Math.min(VOLUME_SIZE_CAP_MB, host.diskMB),
    volumes: config.maxVolumesPerTeam ?? LIMIT_DEFAULTS.maxVolumesPerTeam,
    templates: config.maxTemplatesPerTeam ?? LIMIT_DEFAULTS.maxTemplatesPerTeam,
    snapshots: config.maxSnapshotsPerTeam ?? LIMIT_DEFAULTS.maxSnapshotsPerTeam,
    forkCount: Math.min(FORK_COUNT_CEILING, config.maxForkCount ?? LIMIT_DEFAULTS.maxForkCount),
    uploads: config.maxUploadsPerTeam ?? LIMIT_DEFAULTS.maxUploadsPerTeam,
    uploadsMB: config.maxUploadsMBPerTeam ?? LIMIT_DEFAULTS.maxUploadsMBPerTeam,
  };
}
