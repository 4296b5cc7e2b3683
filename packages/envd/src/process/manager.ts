import { accessSync, constants as fsConstants, type Stats, statSync } from "node:fs";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { Containment } from "../containment/containment.js";
import { describeErrno, errnoOf } from "../errors.js";
import { resolvePath } from "../paths.js";
import type { ServerTiming } from "../server-timing.js";
import type { EnvdState } from "../state.js";
import type { User } from "../users.js";
import { type Launch, Launcher } from "./launch.js";
import { ManagedProcess, type ProcessConfig, type ProcessIo, type Subscription } from "./managed-process.js";
import { spawnChild, spawnInTerminal } from "./native-spawn.js";

export type {
  ProcessConfig,
  ProcessEnd,
  ProcessOutput,
  ProcessStreamItem,
  Subscription,
} from "./managed-process.js";
export { ManagedProcess } from "./managed-process.js";

const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";

export interface StartOptions {
  config: ProcessConfig;
  user: User;
  tag?: string;
  /** Run in a pseudo-terminal of this size instead of with pipes. */
  pty?: { cols: number; rows: number };
  /** Keep a stdin pipe open for input (pipes only); otherwise stdin is /dev/null. */
  stdin: boolean;
  /** Kill the process group this long after the start (the Start call's deadline). */
  timeoutMs?: number;
  /** Left out of list() and find(): a process envd runs for its own ends (sudo's). */
  unlisted?: boolean;
  /** Marks the start's steps (plan, spawn) for the response's Server-Timing. */
  timing?: ServerTiming;
}

/** `pid` or `tag`, shaped like the protobuf `ProcessSelector` oneof. */
export type ProcessSelection =
  | { case: "pid"; value: number }
  | { case: "tag"; value: string }
  | { case: undefined; value?: undefined };

/*
 * A start's look-ups (its program along PATH, its working directory) are a few metadata calls
 * on the sandbox's own disk: made synchronously, as execvp makes them, they cost a syscall each
 * where libuv's thread pool costs a round trip (milliseconds per start under gVisor).
 */

function statOf(file: string): Stats | undefined {
  try {
    return statSync(file);
  } catch {
    return undefined; // missing, not a directory on the way, not searchable: not usable
  }
}

function isExecutableFile(file: string): boolean {
  try {
    accessSync(file, fsConstants.X_OK);
  } catch {
    return false;
  }
  return statOf(file)?.isDirectory() === false;
}

/** Looks `cmd` up like execvp does, so a missing program is an error instead of a start. */
function resolveExecutable(cmd: string, pathEnv: string, cwd: string): string | undefined {
  const candidates = cmd.includes("/")
    ? [path.resolve(cwd, cmd)]
    : pathEnv.split(":").map((dir) => path.resolve(cwd, dir || ".", cmd));
  return candidates.find(isExecutableFile);
}

/** A start refused because the sandbox (or its account) is at its process limit. */
class ProcessLimitError extends ConnectError {
  constructor(cmd: string) {
    super(
      `error starting process '${cmd}': the sandbox is at its process limit (fork: resource temporarily unavailable)`,
      Code.ResourceExhausted,
    );
  }
}

/** Owns every process started through envd, independent of the requests that started them. */
export class ProcessManager {
  private readonly processes = new Map<number, ManagedProcess>();
  private readonly launcher = new Launcher();

  constructor(
    private readonly state: EnvdState,
    private readonly containment?: Containment,
  ) {}

  list(): ManagedProcess[] {
    return [...this.processes.values()];
  }

  find(selection: ProcessSelection | undefined): ManagedProcess {
    switch (selection?.case) {
      case "pid": {
        const proc = this.processes.get(selection.value);
        if (!proc) throw new ConnectError(`process with pid ${selection.value} not found`, Code.NotFound);
        return proc;
      }
      case "tag": {
        for (const proc of this.processes.values()) if (proc.tag === selection.value) return proc;
        throw new ConnectError(`process with tag '${selection.value}' not found`, Code.NotFound);
      }
      default:
        throw new ConnectError("a process selector (pid or tag) is required", Code.InvalidArgument);
    }
  }

  /**
   * Starts a process and returns it with a subscription attached before any output could
   * arrive, so the caller's stream misses nothing.
   */
  async start(opts: StartOptions): Promise<{ process: ManagedProcess; subscription: Subscription }> {
    const { config, user } = opts;
    const { launch, cwd, env } = await this.plan(config, user);
    const mark = (await this.containment?.beforeSpawn()) ?? {};
    opts.timing?.mark("plan");
    const spawn = () =>
      opts.pty
        ? this.spawnPty(launch, cwd, env, opts.pty, config.cmd)
        : this.spawnPipes(launch, cwd, env, opts.stdin, config.cmd);
    const io: ProcessIo = await spawn().catch(async (err: unknown) => {
      // the sandbox is at its process limit (a fork bomb, say): its largest session goes, once
      if (err instanceof ProcessLimitError && (await this.containment?.relieveProcessPressure()))
        return spawn();
      throw err;
    });
    opts.timing?.mark(opts.pty ? "spawn-pty" : "spawn");
    const pid = io.child.pid;
    // Output arrives in I/O callbacks, and only microtasks ran since the spawn: the
    // subscription below sees all of it.
    const proc = new ManagedProcess(
      io,
      config,
      user,
      opts.tag,
      opts.timeoutMs,
      (p) => this.processes.delete(p.pid),
      this.containment ? (end) => this.containment!.explain(pid, end, mark) : undefined,
    );
    if (!opts.unlisted) this.processes.set(proc.pid, proc);
    return { process: proc, subscription: proc.subscribe() };
  }

  /** Kills every process group; envd is shutting down. */
  killAll(): void {
    for (const proc of this.processes.values()) proc.signal("SIGKILL");
  }

  /** Where, with what environment and how a process of `config` runs as `user`. */
  private async plan(
    config: ProcessConfig,
    user: User,
  ): Promise<{ launch: Launch; cwd: string; env: Record<string, string> }> {
    if (!config.cmd) throw new ConnectError("process.cmd is required", Code.InvalidArgument);
    const cwd = this.workdir(user, config.cwd);
    const env: Record<string, string> = {
      PATH: process.env.PATH || DEFAULT_PATH,
      HOME: user.home,
      USER: user.name,
      LOGNAME: user.name,
      SHELL: user.shell,
      ...this.state.envVars,
      ...config.envs,
    };
    const file = resolveExecutable(config.cmd, env.PATH ?? DEFAULT_PATH, cwd);
    if (!file) {
      throw new ConnectError(
        `error starting process '${config.cmd}': executable file not found in $PATH`,
        Code.InvalidArgument,
      );
    }
    return { launch: await this.launcher.as(user, file, config.args), cwd, env };
  }

  private workdir(user: User, requested: string | undefined): string {
    if (requested) {
      const dir = resolvePath(requested, user);
      const info = statOf(dir);
      if (!info) throw new ConnectError(`cwd '${dir}' does not exist`, Code.InvalidArgument);
      if (!info.isDirectory())
        throw new ConnectError(`cwd '${dir}' is not a directory`, Code.InvalidArgument);
      return dir;
    }
    // Unrequested defaults fall back quietly: accounts like `nobody` have no home.
    const { defaultWorkdir } = this.state;
    for (const dir of [defaultWorkdir && resolvePath(defaultWorkdir, user), user.home]) {
      if (dir && statOf(dir)?.isDirectory()) return dir;
    }
    return "/";
  }

  /** A synchronous spawn, wrapped as containment wants it (the child's OOM score). */
  private spawning<T>(spawn: () => T): T {
    return this.containment ? this.containment.spawning(spawn) : spawn();
  }

  private async spawnPipes(
    launch: Launch,
    cwd: string,
    env: Record<string, string>,
    stdin: boolean,
    cmd: string,
  ): Promise<ProcessIo> {
    try {
      const child = this.spawning(() =>
        spawnChild({
          file: launch.file,
          args: launch.args,
          env,
          cwd,
          uid: launch.uid,
          gid: launch.gid,
          stdin,
        }),
      );
      return { kind: "pipes", child, stdin };
    } catch (err) {
      if (errnoOf(err) === "EAGAIN") throw new ProcessLimitError(cmd);
      const reason = describeErrno(errnoOf(err)) ?? (err as Error).message;
      throw new ConnectError(`error starting process '${cmd}': ${reason}`, Code.InvalidArgument);
    }
  }

  private async spawnPty(
    launch: Launch,
    cwd: string,
    env: Record<string, string>,
    size: { cols: number; rows: number },
    cmd: string,
  ): Promise<ProcessIo> {
    try {
      const child = this.spawning(() =>
        spawnInTerminal({
          file: launch.file,
          args: launch.args,
          // what a terminal emulator tells its programs, unless the caller said otherwise
          env: { TERM: "xterm-256color", ...env },
          cwd,
          uid: launch.uid,
          gid: launch.gid,
          cols: size.cols || 80,
          rows: size.rows || 24,
        }),
      );
      return { kind: "pty", child };
    } catch (err) {
      if (errnoOf(err) === "EAGAIN") throw new ProcessLimitError(cmd);
      const reason = describeErrno(errnoOf(err)) ?? (err as Error).message;
      throw new ConnectError(`error starting process '${cmd}' in a PTY: ${reason}`, Code.InvalidArgument);
    }
  }
}
