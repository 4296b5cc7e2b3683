import type { Readable } from "node:stream";
import { Code, ConnectError } from "@connectrpc/connect";
import { errnoOf } from "../errors.js";
import type { User } from "../users.js";
import type { PipedChild, TerminalChild } from "./native-spawn.js";
import { OutputLog } from "./output-log.js";

/** A subscriber holding this many unsent bytes pauses the process's output (backpressure). */
const PAUSE_BYTES = 1 << 20;
/** Paused output resumes once every subscriber is down to this many unsent bytes. */
const RESUME_BYTES = 256 << 10;
/**
 * After the process exits, its pipes (or its terminal) may stay open because a background
 * child inherited them (`cmd &`). The end is then reported once they have been quiet this long...
 */
const DRAIN_IDLE_MS = 50;
/** ...or once more arrived than a pipe can hold: that output is not the exited process's. */
const DRAIN_MAX_BYTES = 1 << 20;
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
  /** Where its first byte is in the process's whole output (all streams together). */
  offset: number;
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
  /** The signal that ended it (SIGKILL…), when one did. */
  signal?: string;
}

export type ProcessStreamItem = ProcessOutput | ProcessEnd;

/** A process's side of envd: pipes (stdin open for input or not) or a pseudo-terminal. */
export type ProcessIo =
  | { kind: "pipes"; child: PipedChild; stdin: boolean }
  | { kind: "pty"; child: TerminalChild };

function signalEnd(signal: string): ProcessEnd {
  const status = `signal: ${SIGNAL_TEXT[signal] ?? signal}`;
  return { type: "end", exitCode: -1, exited: false, status, error: status, signal };
}

function exitEnd(exitCode: number): ProcessEnd {
  const status = `exit status ${exitCode}`;
  return { type: "end", exitCode, exited: true, status, error: exitCode === 0 ? undefined : status };
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
  /** Recent output, for clients that connect later. */
  private readonly log = new OutputLog();
  private paused = false;
  private stdinOpen: boolean;
  private end: ProcessEnd | undefined;
  private exited = false;
  private finished = false;
  private openPipes = 0;
  private drainTimer: NodeJS.Timeout | undefined;
  private drainBytes = 0;
  private readonly killTimer: NodeJS.Timeout | undefined;
  /** What the process's output is read from, by stream name. */
  private readonly outputs: ReadonlyArray<[Readable, ProcessOutput["stream"]]>;

  constructor(
    private readonly io: ProcessIo,
    readonly config: ProcessConfig,
    readonly user: User,
    readonly tag: string | undefined,
    timeoutMs: number | undefined,
    private readonly onFinish: (proc: ManagedProcess) => void,
    /** Says what ended the process when envd knows more than its status (see Containment). */
    private readonly explain: (end: ProcessEnd) => Promise<ProcessEnd> = async (end) => end,
  ) {
    this.pid = io.child.pid;
    this.outputs = ManagedProcess.outputsOf(io);
    this.stdinOpen = io.kind === "pipes" && io.stdin;
    this.attach(io.child);
    if (timeoutMs !== undefined && timeoutMs > 0) {
      this.killTimer = setTimeout(() => this.signal("SIGKILL"), timeoutMs);
    }
  }

  get isPty(): boolean {
    return this.io.kind === "pty";
  }

  /** The process has exited (its output may still be draining). */
  get hasEnded(): boolean {
    return this.exited;
  }

  private static outputsOf(io: ProcessIo): ReadonlyArray<[Readable, ProcessOutput["stream"]]> {
    if (io.kind === "pty") return [[io.child.output, "pty"]];
    return [
      [io.child.stdout, "stdout"],
      [io.child.stderr, "stderr"],
    ];
  }

  private attach(child: PipedChild | TerminalChild): void {
    for (const [stream, name] of this.outputs) {
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
    if ("stdin" in child) child.stdin?.on("error", () => {});
    child.once("exit", (code, signal) => this.ended(signal ? signalEnd(signal) : exitEnd(code ?? -1)));
  }

  /** The process exited: its end (explained) is reported once its output is read. */
  private ended(end: ProcessEnd): void {
    this.exited = true;
    this.explain(end)
      .catch(() => end)
      .then((explained) => {
        this.end = explained;
        if (this.openPipes === 0) this.finish();
        else this.armDrain();
      });
  }

  private output(stream: ProcessOutput["stream"], data: Buffer): void {
    if (this.finished) return;
    this.broadcast(this.log.append(stream, data));
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
    for (const [stream] of this.outputs) stream.pause();
    this.paused = true;
    clearTimeout(this.drainTimer);
  }

  private resume(): void {
    this.paused = false;
    for (const [stream] of this.outputs) stream.resume();
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
    // Background children may still hold the pipes or the terminal; envd lets go of its ends.
    for (const [stream] of this.outputs) stream.destroy();
    if (this.io.kind === "pipes") this.io.child.stdin?.destroy();
    else this.io.child.input.destroy();
    for (const sub of this.subscribers) sub.push(this.end);
    this.onFinish(this);
  }

  /**
   * Output from now on, then the end; with `replayFrom`, the kept output from that offset
   * first (see OutputLog). Only running processes are reachable to subscribe.
   */
  subscribe(replayFrom?: number): Subscription {
    const sub = new Subscription(this);
    let full = false;
    if (replayFrom !== undefined)
      for (const chunk of this.log.since(replayFrom)) full = sub.push(chunk) || full;
    this.subscribers.add(sub);
    if (full) this.pause();
    return sub;
  }

  unsubscribe(sub: Subscription): void {
    if (this.subscribers.delete(sub)) this.drained();
  }

  /** Sends a signal to the process's whole group (it leads its own session). */
  signal(signal: NodeJS.Signals): void {
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
    this.io.child.input.write(Buffer.from(data.buffer, data.byteOffset, data.byteLength));
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
    this.io.child.resize(cols, rows);
  }
}
