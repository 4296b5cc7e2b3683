import { type ChildProcess, spawn } from "node:child_process";
import { once } from "node:events";
import { closeSync, constants as fsConstants, openSync } from "node:fs";
import { access, stat } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import type { IPty } from "node-pty";
import { describeErrno, errnoOf } from "../errors.js";
import { resolvePath } from "../paths.js";
import type { EnvdState } from "../state.js";
import type { User } from "../users.js";

/** A subscriber holding this many unsent bytes pauses the process's output (backpressure). */
const PAUSE_BYTES = 1 << 20;
/** Paused output resumes once every subscriber is down to this many unsent bytes. */
const RESUME_BYTES = 256 << 10;
/**
 * After the process exits, its pipes may stay open because a background child inherited them
 * (`cmd &`). The end is then reported once the pipes have been quiet this long...
 */
const DRAIN_IDLE_MS = 50;
/** ...or once more arrived than a pipe can hold: that output is not the exited process's. */
const DRAIN_MAX_BYTES = 1 << 20;
/**
 * node-pty closes a terminal 200 ms after its process exits, read to the end or not, so a
 * paused PTY checks this often whether its process is gone and then resumes.
 */
const PTY_EXIT_POLL_MS = 50;
const DEFAULT_PATH = "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin";
const SETPRIV_PATHS = ["/usr/bin/setpriv", "/bin/setpriv"];

/** Go's names for signal deaths, so `status` reads as the reference envd's ("signal: killed"). */
const SIGNAL_TEXT: Record<string, string> = {
  SIGHUP: "hangup",
  SIGINT: "interrupt",
  SIGQUIT: "quit",
  SIGILL: "illegal instruction",
  SIGTRAP: "trace/breakpoint trap",
  SIGABRT: "aborted",
  SIGBUS: "bus error",
  SIGFPE: "floating point exception",
  SIGKILL: "killed",
  SIGUSR1: "user defined signal 1",
  SIGSEGV: "segmentation fault",
  SIGUSR2: "user defined signal 2",
  SIGPIPE: "broken pipe",
  SIGALRM: "alarm clock",
  SIGTERM: "terminated",
};

export interface ProcessConfig {
  cmd: string;
  args: string[];
  envs: Record<string, string>;
  /** As requested; the process runs in its resolved form. */
  cwd?: string;
}

export interface ProcessOutput {
  type: "data";
  stream: "stdout" | "stderr" | "pty";
  data: Uint8Array;
}

export interface ProcessEnd {
  type: "end";
  /** The exit code; -1 when a signal ended the process. */
  exitCode: number;
  /** True when the process exited by itself rather than by a signal. */
  exited: boolean;
  /** "exit status 1", "signal: killed", ... */
  status: string;
  /** Set unless the process exited with 0. */
  error?: string;
}

export type ProcessStreamItem = ProcessOutput | ProcessEnd;

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
}

/** `pid` or `tag`, shaped like the protobuf `ProcessSelector` oneof. */
export type ProcessSelection =
  | { case: "pid"; value: number }
  | { case: "tag"; value: string }
  | { case: undefined; value?: undefined };

type ProcessIo = { kind: "pipes"; child: ChildProcess } | { kind: "pty"; term: IPty };

interface Launch {
  file: string;
  args: string[];
  uid?: number;
  gid?: number;
}

function signalEnd(signal: string): ProcessEnd {
  const status = `signal: ${SIGNAL_TEXT[signal] ?? signal}`;
  return { type: "end", exitCode: -1, exited: false, status, error: status };
}

function exitEnd(exitCode: number): ProcessEnd {
  const status = `exit status ${exitCode}`;
  return { type: "end", exitCode, exited: true, status, error: exitCode === 0 ? undefined : status };
}

function signalName(signo: number): string {
  const entry = Object.entries(os.constants.signals).find(([, n]) => n === signo);
  return entry ? entry[0] : `signal ${signo}`;
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return errnoOf(err) === "EPERM";
  }
}

/**
 * libuv reads a terminal only once more after the process side hangs up and then reports the
 * end, dropping whatever the process wrote last. envd keeps the terminal's process side open
 * itself until node-pty is done: then node-pty reads to the end and finishes 200 ms after the
 * process exited.
 */
function holdTerminalOpen(term: IPty): void {
  const { ptsName } = term as IPty & { ptsName: string };
  let fd: number;
  try {
    fd = openSync(ptsName, fsConstants.O_WRONLY | fsConstants.O_NOCTTY);
  } catch {
    return; // the process is already gone
  }
  term.onExit(() => closeSync(fd));
}

function canExecute(file: string): Promise<boolean> {
  return access(file, fsConstants.X_OK).then(
    () => true,
    () => false,
  );
}

async function isDirectory(dir: string): Promise<boolean> {
  return stat(dir).then(
    (info) => info.isDirectory(),
    () => false,
  );
}

/** Looks `cmd` up like execvp does, so a missing program is an error instead of a start. */
async function resolveExecutable(cmd: string, pathEnv: string, cwd: string): Promise<string | undefined> {
  const candidates = cmd.includes("/")
    ? [path.resolve(cwd, cmd)]
    : pathEnv.split(":").map((dir) => path.resolve(cwd, dir || ".", cmd));
  for (const candidate of candidates) {
    if ((await canExecute(candidate)) && !(await isDirectory(candidate))) return candidate;
  }
  return undefined;
}

/** One consumer of a process's output: a Start or Connect stream. */
export class Subscription {
  private readonly queue: ProcessStreamItem[] = [];
  private bytes = 0;
  private wake: (() => void) | undefined;

  constructor(private readonly owner: ManagedProcess) {}

  get queuedBytes(): number {
    return this.bytes;
  }

  /** Queues an item; true when this subscriber is now over its budget. */
  push(item: ProcessStreamItem): boolean {
    this.queue.push(item);
    if (item.type === "data") this.bytes += item.data.length;
    this.wake?.();
    return this.bytes > PAUSE_BYTES;
  }

  /**
   * The next item in order, or undefined when nothing arrived for `idleMs` (time for a
   * keepalive). Rejects with the signal's reason when it aborts.
   */
  async next(signal: AbortSignal, idleMs: number): Promise<ProcessStreamItem | undefined> {
    if (this.queue.length === 0) {
      signal.throwIfAborted();
      await new Promise<void>((resolve, reject) => {
        const settle = () => {
          clearTimeout(timer);
          signal.removeEventListener("abort", abort);
          this.wake = undefined;
        };
        const abort = () => {
          settle();
          reject(signal.reason);
        };
        const timer = setTimeout(() => {
          settle();
          resolve();
        }, idleMs);
        signal.addEventListener("abort", abort, { once: true });
        this.wake = () => {
          settle();
          resolve();
        };
      });
    }
    const item = this.queue.shift();
    if (item?.type === "data") {
      this.bytes -= item.data.length;
      this.owner.drained();
    }
    return item;
  }

  close(): void {
    this.owner.unsubscribe(this);
  }
}

/** A process started by envd: it outlives the request that started it. */
export class ManagedProcess {
  readonly pid: number;
  private readonly subscribers = new Set<Subscription>();
  private paused = false;
  private stdinOpen: boolean;
  private end: ProcessEnd | undefined;
  private finished = false;
  private openPipes = 0;
  private drainTimer: NodeJS.Timeout | undefined;
  private drainBytes = 0;
  private ptyExitPoll: NodeJS.Timeout | undefined;
  private readonly killTimer: NodeJS.Timeout | undefined;

  constructor(
    private readonly io: ProcessIo,
    readonly config: ProcessConfig,
    readonly user: User,
    readonly tag: string | undefined,
    timeoutMs: number | undefined,
    private readonly onFinish: (proc: ManagedProcess) => void,
  ) {
    if (io.kind === "pipes") {
      this.pid = io.child.pid as number;
      this.stdinOpen = io.child.stdin !== null;
      this.attachPipes(io.child);
    } else {
      this.pid = io.term.pid;
      this.stdinOpen = false;
      io.term.onData((chunk) => this.output("pty", chunk as unknown as Buffer));
      io.term.onExit(({ exitCode, signal }) => {
        this.end = signal ? signalEnd(signalName(signal)) : exitEnd(exitCode);
        this.finish();
      });
    }
    if (timeoutMs !== undefined && timeoutMs > 0) {
      this.killTimer = setTimeout(() => this.signal("SIGKILL"), timeoutMs);
    }
  }

  get isPty(): boolean {
    return this.io.kind === "pty";
  }

  private attachPipes(child: ChildProcess): void {
    for (const [stream, name] of [
      [child.stdout, "stdout"],
      [child.stderr, "stderr"],
    ] as const) {
      if (!stream) continue;
      this.openPipes++;
      stream.on("data", (chunk: Buffer) => this.output(name, chunk));
      // A failed read ends the stream like EOF; there is nobody to report it to.
      stream.on("error", () => {});
      stream.once("close", () => {
        this.openPipes--;
        if (this.openPipes === 0 && this.end) this.finish();
      });
    }
    // Writes after the process closed its stdin fail with EPIPE; SendInput reports them.
    child.stdin?.on("error", () => {});
    child.on("error", () => {});
    child.once("exit", (code, signal) => {
      this.end = signal ? signalEnd(signal) : exitEnd(code ?? -1);
      if (this.openPipes === 0) this.finish();
      else this.armDrain();
    });
  }

  private output(stream: ProcessOutput["stream"], data: Buffer): void {
    if (this.finished) return;
    this.broadcast({ type: "data", stream, data });
    if (!this.end) return;
    this.drainBytes += data.length;
    if (this.drainBytes > DRAIN_MAX_BYTES) this.finish();
    else this.armDrain();
  }

  private broadcast(item: ProcessOutput): void {
    // Nobody listening: output is dropped, never buffered.
    let full = false;
    for (const sub of this.subscribers) full = sub.push(item) || full;
    if (full) this.pause();
  }

  private armDrain(): void {
    clearTimeout(this.drainTimer);
    if (!this.paused) this.drainTimer = setTimeout(() => this.finish(), DRAIN_IDLE_MS);
  }

  private pause(): void {
    if (this.paused) return;
    if (this.io.kind === "pty") {
      // What an exited PTY process left behind is one terminal buffer: read it, or lose it.
      if (!isRunning(this.pid)) return;
      this.io.term.pause();
      this.ptyExitPoll = setInterval(() => {
        if (!isRunning(this.pid)) this.resume();
      }, PTY_EXIT_POLL_MS);
    } else {
      this.io.child.stdout?.pause();
      this.io.child.stderr?.pause();
    }
    this.paused = true;
    clearTimeout(this.drainTimer);
  }

  private resume(): void {
    this.paused = false;
    clearInterval(this.ptyExitPoll);
    if (this.io.kind === "pty") this.io.term.resume();
    else {
      this.io.child.stdout?.resume();
      this.io.child.stderr?.resume();
    }
    if (this.end && !this.finished) this.armDrain();
  }

  /** Called by a subscription after it handed an item on. */
  drained(): void {
    if (!this.paused) return;
    for (const sub of this.subscribers) if (sub.queuedBytes > RESUME_BYTES) return;
    this.resume();
  }

  private finish(): void {
    if (this.finished || !this.end) return;
    this.finished = true;
    clearTimeout(this.drainTimer);
    clearTimeout(this.killTimer);
    clearInterval(this.ptyExitPoll);
    if (this.io.kind === "pipes") {
      // Background children may still hold the pipes; envd lets go of its ends.
      const { stdin, stdout, stderr } = this.io.child;
      for (const stream of [stdin, stdout, stderr]) stream?.destroy();
    }
    for (const sub of this.subscribers) sub.push(this.end);
    this.onFinish(this);
  }

  /** Output from now on, then the end. Only running processes are reachable to subscribe. */
  subscribe(): Subscription {
    const sub = new Subscription(this);
    this.subscribers.add(sub);
    return sub;
  }

  unsubscribe(sub: Subscription): void {
    if (this.subscribers.delete(sub)) this.drained();
  }

  /** Sends a signal to the process's whole group (it leads its own session). */
  signal(signal: "SIGTERM" | "SIGKILL"): void {
    try {
      process.kill(-this.pid, signal);
    } catch {
      try {
        process.kill(this.pid, signal);
      } catch {
        // already gone; its end event is on the way
      }
    }
  }

  async writeStdin(data: Uint8Array, signal: AbortSignal): Promise<void> {
    if (this.io.kind === "pty") {
      throw new ConnectError(
        `process ${this.pid} runs in a PTY: send its input as pty, not stdin`,
        Code.FailedPrecondition,
      );
    }
    const stdin = this.io.child.stdin;
    if (!stdin || !this.stdinOpen) {
      const why = stdin ? "was closed" : "is not enabled (start the process with stdin: true)";
      throw new ConnectError(`stdin of process ${this.pid} ${why}`, Code.FailedPrecondition);
    }
    // Resolves once the bytes are in the pipe: a process that does not read holds the caller back.
    await new Promise<void>((resolve, reject) => {
      const abort = () => reject(signal.reason);
      signal.addEventListener("abort", abort, { once: true });
      stdin.write(data, (err) => {
        signal.removeEventListener("abort", abort);
        if (!err) return resolve();
        const reason = errnoOf(err) === "EPIPE" ? "the process closed its stdin" : err.message;
        reject(
          new ConnectError(`writing to stdin of process ${this.pid}: ${reason}`, Code.FailedPrecondition),
        );
      });
    });
  }

  writePty(data: Uint8Array): void {
    if (this.io.kind !== "pty") {
      throw new ConnectError(
        `process ${this.pid} has no PTY: send its input as stdin`,
        Code.FailedPrecondition,
      );
    }
    this.io.term.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
  }

  closeStdin(): void {
    if (this.io.kind === "pty") {
      throw new ConnectError(
        `process ${this.pid} runs in a PTY and has no stdin to close: send Ctrl+D (0x04) as pty input instead`,
        Code.FailedPrecondition,
      );
    }
    // end(), not destroy(): input already accepted still reaches the process before EOF.
    if (this.stdinOpen) this.io.child.stdin?.end();
    this.stdinOpen = false;
  }

  resize(cols: number, rows: number): void {
    if (this.io.kind !== "pty") {
      throw new ConnectError(`process ${this.pid} has no PTY to resize`, Code.FailedPrecondition);
    }
    if (cols < 1 || rows < 1) {
      throw new ConnectError(`PTY size must be at least 1x1, got ${cols}x${rows}`, Code.InvalidArgument);
    }
    this.io.term.resize(cols, rows);
  }
}

/** Owns every process started through envd, independent of the requests that started them. */
export class ProcessManager {
  private readonly processes = new Map<number, ManagedProcess>();
  private setprivPath: Promise<string | undefined> | undefined;

  constructor(private readonly state: EnvdState) {}

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
    if (!config.cmd) throw new ConnectError("process.cmd is required", Code.InvalidArgument);
    const cwd = await this.workdir(user, config.cwd);
    const env: Record<string, string> = {
      PATH: process.env.PATH || DEFAULT_PATH,
      HOME: user.home,
      USER: user.name,
      LOGNAME: user.name,
      SHELL: user.shell,
      ...this.state.envVars,
      ...config.envs,
    };
    const file = await resolveExecutable(config.cmd, env.PATH ?? DEFAULT_PATH, cwd);
    if (!file) {
      throw new ConnectError(
        `error starting process '${config.cmd}': executable file not found in $PATH`,
        Code.InvalidArgument,
      );
    }
    const launch = await this.launchAs(user, file, config.args);
    const io = opts.pty
      ? await this.spawnPty(launch, cwd, env, opts.pty, config.cmd)
      : await this.spawnPipes(launch, cwd, env, opts.stdin, config.cmd);
    // Output arrives in I/O callbacks, and only microtasks ran since the spawn: the
    // subscription below sees all of it.
    const proc = new ManagedProcess(io, config, user, opts.tag, opts.timeoutMs, (p) =>
      this.processes.delete(p.pid),
    );
    this.processes.set(proc.pid, proc);
    return { process: proc, subscription: proc.subscribe() };
  }

  /** Kills every process group; envd is shutting down. */
  killAll(): void {
    for (const proc of this.processes.values()) proc.signal("SIGKILL");
  }

  private async workdir(user: User, requested: string | undefined): Promise<string> {
    if (requested) {
      const dir = resolvePath(requested, user);
      const info = await stat(dir).catch(() => undefined);
      if (!info) throw new ConnectError(`cwd '${dir}' does not exist`, Code.InvalidArgument);
      if (!info.isDirectory())
        throw new ConnectError(`cwd '${dir}' is not a directory`, Code.InvalidArgument);
      return dir;
    }
    // Unrequested defaults fall back quietly: accounts like `nobody` have no home.
    const { defaultWorkdir } = this.state;
    for (const dir of [defaultWorkdir && resolvePath(defaultWorkdir, user), user.home]) {
      if (dir && (await isDirectory(dir))) return dir;
    }
    return "/";
  }

  /**
   * How to run `file` as `user`. Node's spawn and node-pty only set uid and gid (node-pty even
   * keeps envd's own supplementary groups), so when envd is root and util-linux's setpriv is
   * there, it switches user with the account's supplementary groups and execs in place (same pid).
   */
  private async launchAs(user: User, file: string, args: string[]): Promise<Launch> {
    if (user.uid === process.getuid?.() && user.gid === process.getgid?.()) return { file, args };
    this.setprivPath ??= (async () => {
      for (const candidate of SETPRIV_PATHS) if (await canExecute(candidate)) return candidate;
      return undefined;
    })();
    const setpriv = process.getuid?.() === 0 ? await this.setprivPath : undefined;
    if (!setpriv) return { file, args, uid: user.uid, gid: user.gid };
    return {
      file: setpriv,
      args: [`--reuid=${user.uid}`, `--regid=${user.gid}`, "--init-groups", "--", file, ...args],
    };
  }

  private async spawnPipes(
    launch: Launch,
    cwd: string,
    env: Record<string, string>,
    stdin: boolean,
    cmd: string,
  ): Promise<ProcessIo> {
    const child = spawn(launch.file, launch.args, {
      cwd,
      env,
      uid: launch.uid,
      gid: launch.gid,
      // Its own session and process group, so signals reach everything it starts.
      detached: true,
      stdio: [stdin ? "pipe" : "ignore", "pipe", "pipe"],
    });
    if (child.pid === undefined) {
      const [err] = (await once(child, "error")) as [Error];
      const reason = describeErrno(errnoOf(err)) ?? err.message;
      throw new ConnectError(`error starting process '${cmd}': ${reason}`, Code.InvalidArgument);
    }
    return { kind: "pipes", child };
  }

  private async spawnPty(
    launch: Launch,
    cwd: string,
    env: Record<string, string>,
    size: { cols: number; rows: number },
    cmd: string,
  ): Promise<ProcessIo> {
    // Loaded on first use: most sandboxes never open a terminal.
    const pty = await import("node-pty");
    try {
      const term = pty.spawn(launch.file, launch.args, {
        name: env.TERM ?? "xterm-256color",
        cols: size.cols || 80,
        rows: size.rows || 24,
        cwd,
        env,
        uid: launch.uid,
        gid: launch.gid,
        // Raw bytes: output is forwarded as-is, never decoded.
        encoding: null,
      });
      holdTerminalOpen(term);
      return { kind: "pty", term };
    } catch (err) {
      throw new ConnectError(
        `error starting process '${cmd}' in a PTY: ${err instanceof Error ? err.message : String(err)}`,
        Code.Internal,
      );
    }
  }
}
