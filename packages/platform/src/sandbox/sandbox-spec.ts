import type { Logger } from "../lib/log.js";
import type { EgressPolicy } from "../model/network.js";
import type { NetworkManager } from "../network/network-manager.js";
import type { SandboxDisk } from "../rootfs/disk.js";
import type { ContainerRuntime, RuntimeName } from "../runtime/container-runtime.js";

/** Everything needed to (re)start one sandbox's container. */
export interface BootSpec {
  id: string;
  runtime: RuntimeName;
  /** Template layers, topmost first. */
  lowers: string[];
  cpuCount: number;
  /**
   * CPU weight while it boots and waits (cpu.shares scale): a warm pool member booted for
   * stock yields to sandboxes in use; the default weight when unset.
   */
  cpuShares?: number;
  /** Nobody waits for this boot until the signal aborts (see RunOptions.patience). */
  patience?: AbortSignal;
  memoryMB: number;
  /** Caps the writable layer (its own loop-mounted disk); uncapped, on the data dir's disk, when unset. */
  diskSizeMB?: number;
  /** What the sandbox may reach (its create's or last update's policy). */
  egress: EgressPolicy;
  envdAccessToken: string;
  defaultUser: string;
  defaultWorkdir?: string;
  /** Volumes bound read-write into the sandbox, at absolute paths. */
  volumes?: Array<{ volumeId: string; path: string }>;
  /**
   * Leave the egress CA out of its trust: a template build's sandbox, whose writable layer
   * becomes a layer of the template (the CA is put into each sandbox at its own boot).
   */
  withoutEgressCa?: boolean;
}

export interface SandboxPaths {
  dir: string;
  /** The sandbox's own disk; upper and work live on it when it is mounted. */
  disk: SandboxDisk;
  upper: string;
  work: string;
  rootfs: string;
  bundle: string;
  /**
   * The console log on the data dir: a sandbox's without a disk of its own (a build's), and
   * what is kept of earlier runs of one with a disk, whose running log is on that disk
   * (see console-log.ts).
   */
  consoleLog: string;
  checkpoint: string;
}

export interface SandboxHostOptions {
  dataDir: string;
  runtimes: ReadonlyMap<RuntimeName, ContainerRuntime>;
  network: NetworkManager;
  /** Host directory holding envd's bundle (`envd.cjs` and its native addons). */
  envdDir: string;
  /** The egress CA's certificate (PEM), put into every sandbox's trust at boot (trusted-ca.ts). */
  egressCa?: string;
  /** Tasks a sandbox's commands may run (see resource-limits.ts); the runtime's default otherwise. */
  processLimit?: number;
  /** Where a volume's files are on this host, mounted (for sandboxes that bind it). */
  volumeSource?(volumeId: string): Promise<string>;
  /** Makes sure these layers (absolute paths) are on this host: beyond one machine, fetched from another node. */
  ensureLayers?(lowers: string[]): Promise<void>;
  /** Newest bytes kept of each sandbox's console log (see console-log.ts). */
  consoleLogMaxBytes?: number;
  log: Logger;
}
