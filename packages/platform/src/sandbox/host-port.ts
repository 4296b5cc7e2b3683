import type { SandboxAgentPort } from "../agent/agent-port.js";
import type { EgressPolicy } from "../model/network.js";
import type { CgroupLife } from "../runtime/cgroup-limits.js";
import type { ContainerState, RuntimeName } from "../runtime/container-runtime.js";
import type { BootSpec, SandboxPaths } from "./sandbox-host.js";

export type { CgroupLife } from "../runtime/cgroup-limits.js";

/** A container's status as its runtime reports it. */
export type ContainerStatus = ContainerState["status"];

/** Which sandbox a call is about, and the runtime it runs under. */
export type SandboxRef = Pick<BootSpec, "id" | "runtime">;

/**
 * One sandbox on this host, as the orchestrator and the warm pool use it: its container
 * (runtime), network, root filesystem and the agent (envd) inside it. `SandboxHost` is the
 * real one (root, runtimes, network namespaces); `FakeSandboxHost` (orchestrator/testing)
 * keeps the same contract in memory, so the lifecycle is unit-tested without root.
 *
 * The container moves between: none, running, frozen (freeze/thaw), checkpointed (memory
 * image on disk, container gone: checkpoint/restore) and stopped (files kept, container gone:
 * stop/boot); destroy removes every trace.
 */
export interface SandboxHostPort {
  /** envd inside the sandbox. */
  readonly agent: SandboxAgentPort;
  /** Environment every sandbox's processes get from the host (trust in the egress CA). */
  readonly sandboxEnv?: Readonly<Record<string, string>>;
  /** Boots the sandbox from its files and waits until envd answers. Resolves its address. */
  boot(spec: BootSpec): Promise<string>;
  /** Boots a new sandbox from another one's memory image (a memory snapshot). */
  bootFromImage(spec: BootSpec, imageDir: string): Promise<string>;
  /** Restores a checkpointed sandbox with its processes; resolves its address. */
  restore(spec: BootSpec): Promise<string>;
  /** Stops every process where it is, memory kept. */
  freeze(ref: SandboxRef): Promise<void>;
  thaw(ref: SandboxRef): Promise<void>;
  /** Whether this runtime can write memory images at all. */
  canCheckpoint(runtime: RuntimeName): boolean;
  /** Saves memory to disk and removes the container; throws when the sandbox cannot be saved. */
  checkpoint(ref: SandboxRef): Promise<void>;
  /** Removes the container and its network; the writable layer stays for a later boot. */
  stop(ref: SandboxRef): Promise<void>;
  /** Removes every trace of the sandbox from the host. */
  destroy(ref: SandboxRef): Promise<void>;
  /** The container's status, undefined when there is none. */
  status(ref: SandboxRef): Promise<ContainerStatus | undefined>;
  /** The sandbox's address while it has a network. */
  address(id: string): Promise<string | undefined>;
  /** Replaces the egress policy of a sandbox that has a network. */
  setEgress(id: string, egress: EgressPolicy): Promise<void>;
  /** After a restart: the egress of a sandbox kept running, for the firewall. */
  rememberEgress(id: string, egress: EgressPolicy): Promise<void>;
  /** Makes the writable layer readable on the host (also while stopped); resolves its path. */
  mountFiles(id: string): Promise<string>;
  paths(id: string): SandboxPaths;
  /** Its processes (0 once its init exited) and OOM kills. */
  life(ref: Pick<BootSpec, "id">): Promise<CgroupLife>;
  /** Its processes: 0 once its init exited. */
  processes(ref: Pick<BootSpec, "id">): Promise<number | undefined>;
  /** Sets its CPU weight (cpu.shares scale). */
  weigh(ref: Pick<BootSpec, "id">, cpuShares: number): Promise<void>;
}
