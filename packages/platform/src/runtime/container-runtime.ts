import type { RuntimeName } from "../model/sandbox.js";

export type { RuntimeName };

/** OCI states as runc and runsc report them. */
export type ContainerStatus = "creating" | "created" | "running" | "paused" | "stopped";

export interface ContainerState {
  id: string;
  status: ContainerStatus;
  /** Host pid of the container's init (runc) or of the gVisor sandbox (runsc); absent when stopped. */
  pid?: number;
  bundle: string;
}

/**
 * Names a container and the network namespace it lives in. runsc needs the netns for every
 * command (its control socket is an abstract unix socket, which is per netns); runc ignores it.
 */
export interface ContainerRef {
  id: string;
  netnsPath: string;
}

export interface RunOptions {
  bundleDir: string;
  /** The container's stdout and stderr are appended here. */
  consoleLog: string;
  /**
   * Set when nobody waits for this start (a warm pool member booted for stock): the runtime
   * may take longer over it where that costs less CPU, until the signal aborts (someone came
   * to wait for it).
   */
  patience?: AbortSignal;
}

export interface RestoreOptions extends RunOptions {
  imageDir: string;
}

export interface ContainerRuntime {
  readonly name: RuntimeName;
  /** Starts the container detached; resolves once its init process runs. */
  run(c: ContainerRef, opts: RunOptions): Promise<void>;
  /** undefined when no container with that id exists under this runtime's root. */
  state(c: ContainerRef): Promise<ContainerState | undefined>;
  /** Freezes every process (memory stays in RAM). */
  pause(c: ContainerRef): Promise<void>;
  resume(c: ContainerRef): Promise<void>;
  /** Signals the init process, or every process with `all`. */
  kill(c: ContainerRef, signal: NodeJS.Signals, opts?: { all?: boolean }): Promise<void>;
  /** Removes the container, killing it first when running; a missing container is not an error. */
  delete(c: ContainerRef): Promise<void>;
  /**
   * Saves the container's memory to `imageDir`; the container is stopped afterwards (also when
   * the checkpoint fails). Absent where the runtime cannot checkpoint.
   */
  checkpoint?(c: ContainerRef, imageDir: string): Promise<void>;
  /** Starts the container again from a checkpoint, replacing the stopped one of the same id. */
  restore?(c: ContainerRef, opts: RestoreOptions): Promise<void>;
  /**
   * Removes what a checkpoint left of the container (its record, its cgroups) so a restore may
   * use the id again; `delete` does the same, slower. Only after `checkpoint`.
   */
  forgetCheckpointed?(c: ContainerRef): Promise<void>;
  /** Ids of all containers under this runtime's root. */
  list(): Promise<string[]>;
}

export interface RuntimeOptions {
  /** Directory the runtime keeps its container state in (its --root), owned by the platform. */
  stateDir: string;
}
