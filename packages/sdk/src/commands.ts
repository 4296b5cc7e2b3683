import type { CallOptions } from "@connectrpc/connect";
import type { EnvdClient, ProcessInfo, StartResponse } from "@x/envd-client";
import { Signal } from "@x/envd-client";
import { CommandExitError, type CommandResult, found, fromConnectError, NotFoundError } from "./errors.js";

/** Foreground commands time out after a minute unless told otherwise. */
const DEFAULT_TIMEOUT_MS = 60_000;

export interface CommandStartOptions {
  /** Environment variables of the command. */
  envs?: Record<string, string>;
  /** Working directory; the user's home by default. */
  cwd?: string;
  /** Name to find the process by later (`commands.connect(tag)`). */
  tag?: string;
  /** Keep stdin open for `sendStdin`. */
  stdin?: boolean;
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
  /**
   * How long to wait for the command, in ms; 0 for no limit. Foreground runs default to 60 s,
   * background ones to no limit. Past it the call fails with a `TimeoutError`.
   */
  timeoutMs?: number;
}

export interface CommandConnectOptions {
  onStdout?: (data: string) => void;
  onStderr?: (data: string) => void;
  timeoutMs?: number;
  /**
   * Output to get again, from this byte of the process's output on: a previous handle's
   * `outputOffset` continues where it stopped. Default: all output envd kept (its newest
   * 512 KiB), so a reconnect never leaves a gap.
   */
  fromOffset?: number;
}

type ProcessSelectorInit = { selector: { case: "pid"; value: number } | { case: "tag"; value: string } };

function selector(pidOrTag: number | string): ProcessSelectorInit {
  return typeof pidOrTag === "number"
    ? { selector: { case: "pid", value: pidOrTag } }
    : { selector: { case: "tag", value: pidOrTag } };
}

type Events = AsyncIterable<StartResponse | { event?: StartResponse["event"] }>;

/**
 * A process started in the sandbox, or connected to: its output so far, `wait()` for the result,
 * and stdin and signals.
 */
export class CommandHandle {
  stdout = "";
  stderr = "";
  /** The offset after the last output byte received (see CommandConnectOptions.fromOffset). */
  outputOffset = 0;
  private readonly result: Promise<CommandResult>;

  /** @internal */
  constructor(
    readonly pid: number,
    private readonly commands: Commands,
    private readonly controller: AbortController,
    iterator: AsyncIterator<{ event?: StartResponse["event"] }>,
    handlers: {
      onStdout?: (data: string) => void;
      onStderr?: (data: string) => void;
      onPty?: (data: Uint8Array) => void;
    },
    context: string,
  ) {
    const stdoutDecoder = new TextDecoder();
    const stderrDecoder = new TextDecoder();
    this.result = (async () => {
      let ended: CommandResult | undefined;
      try {
        for (;;) {
          const next = await iterator.next();
          if (next.done) break;
          const event = next.value.event?.event;
          if (event?.case === "data") {
            const output = event.value.output;
            if (output.value) this.outputOffset = Number(event.value.offset) + output.value.length;
            if (output.case === "stdout") {
              const text = stdoutDecoder.decode(output.value, { stream: true });
              this.stdout += text;
              handlers.onStdout?.(text);
            } else if (output.case === "stderr") {
              const text = stderrDecoder.decode(output.value, { stream: true });
              this.stderr += text;
              handlers.onStderr?.(text);
            } else if (output.case === "pty") {
              handlers.onPty?.(output.value);
            }
          } else if (event?.case === "end") {
            // Read on to the stream's end: that is what releases the call's deadline timer.
            ended = {
              exitCode: event.value.exitCode,
              stdout: this.stdout,
              stderr: this.stderr,
              ...(event.value.error ? { error: event.value.error } : {}),
            };
          }
        }
        if (ended) return ended;
        throw new NotFoundError(
          `${context}: the output stream ended before the process did. Reconnect with commands.connect(${pid}).`,
        );
      } catch (err) {
        throw fromConnectError(err, context);
      } finally {
        if (!ended) {
          // Cut the request; the read that fails on it releases the call's deadline timer.
          controller.abort();
          await iterator.next().catch(() => undefined);
        }
      }
    })();
    // Callers who never wait() must not see an unhandled rejection.
    this.result.catch(() => undefined);
  }

  /** Waits for the process to end; throws `CommandExitError` on a non-zero exit code. */
  async wait(): Promise<CommandResult> {
    const result = await this.result;
    if (result.exitCode !== 0) throw new CommandExitError(result);
    return result;
  }

  /** Stops receiving output; the process keeps running. */
  disconnect(): void {
    this.controller.abort();
  }

  /** Sends SIGKILL; `false` when the process was already gone. */
  kill(): Promise<boolean> {
    return this.commands.kill(this.pid);
  }

  sendStdin(data: string | Uint8Array): Promise<void> {
    return this.commands.sendStdin(this.pid, data);
  }

  closeStdin(): Promise<void> {
    return this.commands.closeStdin(this.pid);
  }
}

/** Starts a process and returns its handle once envd reports its pid. */
export async function startProcess(
  envd: EnvdClient,
  commands: Commands,
  request: Parameters<EnvdClient["process"]["start"]>[0],
  handlers: ConstructorParameters<typeof CommandHandle>[4],
  timeoutMs: number,
  context: string,
): Promise<CommandHandle> {
  const controller = new AbortController();
  const call: CallOptions = { signal: controller.signal, ...(timeoutMs > 0 ? { timeoutMs } : {}) };
  return attach(envd.process.start(request, call), commands, controller, handlers, context);
}

async function attach(
  events: Events,
  commands: Commands,
  controller: AbortController,
  handlers: ConstructorParameters<typeof CommandHandle>[4],
  context: string,
): Promise<CommandHandle> {
  const iterator = events[Symbol.asyncIterator]();
  try {
    const first = await iterator.next();
    const event = first.done ? undefined : first.value.event?.event;
    if (event?.case !== "start") throw new NotFoundError(`${context}: envd did not report a start event`);
    return new CommandHandle(event.value.pid, commands, controller, iterator, handlers, context);
  } catch (err) {
    controller.abort();
    throw fromConnectError(err, context);
  }
}

/** Processes in a sandbox, over envd's Process service. */
export class Commands {
  /** @internal */
  constructor(private readonly envd: EnvdClient) {}

  /** Runs `cmd` in bash and waits for it; throws `CommandExitError` on a non-zero exit code. */
  run(cmd: string, opts?: CommandStartOptions & { background?: false }): Promise<CommandResult>;
  /** Starts `cmd` in bash and returns at once with a handle. */
  run(cmd: string, opts: CommandStartOptions & { background: true }): Promise<CommandHandle>;
  async run(
    cmd: string,
    opts: CommandStartOptions & { background?: boolean } = {},
  ): Promise<CommandResult | CommandHandle> {
    const handle = await startProcess(
      this.envd,
      this,
      {
        process: { cmd: "/bin/bash", args: ["-l", "-c", cmd], envs: opts.envs ?? {}, cwd: opts.cwd },
        tag: opts.tag,
        stdin: opts.stdin ?? false,
      },
      { onStdout: opts.onStdout, onStderr: opts.onStderr },
      opts.timeoutMs ?? (opts.background ? 0 : DEFAULT_TIMEOUT_MS),
      `Running \`${cmd}\``,
    );
    return opts.background ? handle : handle.wait();
  }

  /** Attaches to a running process by pid (number) or tag (string). */
  async connect(pidOrTag: number | string, opts: CommandConnectOptions = {}): Promise<CommandHandle> {
    const controller = new AbortController();
    const timeoutMs = opts.timeoutMs ?? 0;
    const events = this.envd.process.connect(
      {
        process: selector(pidOrTag),
        ...(opts.fromOffset !== undefined ? { outputOffset: BigInt(opts.fromOffset) } : {}),
      },
      { signal: controller.signal, ...(timeoutMs > 0 ? { timeoutMs } : {}) },
    );
    return attach(
      events,
      this,
      controller,
      { onStdout: opts.onStdout, onStderr: opts.onStderr },
      `Connecting to process ${pidOrTag}`,
    );
  }

  /** Processes running in the sandbox, with their command, pid and tag. */
  async list(): Promise<ProcessInfo[]> {
    try {
      return (await this.envd.process.list({})).processes;
    } catch (err) {
      throw fromConnectError(err, "Listing processes");
    }
  }

  /** Sends SIGKILL; `false` when there was no such process. */
  async kill(pidOrTag: number | string): Promise<boolean> {
    return found(
      this.envd.process.sendSignal({ process: selector(pidOrTag), signal: Signal.SIGKILL }).catch((err) => {
        throw fromConnectError(err, `Killing process ${pidOrTag}`);
      }),
    );
  }

  /** Writes to a process's stdin (started with `stdin: true`). */
  async sendStdin(pidOrTag: number | string, data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    try {
      await this.envd.process.sendInput({
        process: selector(pidOrTag),
        input: { input: { case: "stdin", value: bytes } },
      });
    } catch (err) {
      throw fromConnectError(err, `Sending stdin to process ${pidOrTag}`);
    }
  }

  /** Closes a process's stdin, so it reads end-of-file. */
  async closeStdin(pidOrTag: number | string): Promise<void> {
    try {
      await this.envd.process.closeStdin({ process: selector(pidOrTag) });
    } catch (err) {
      throw fromConnectError(err, `Closing stdin of process ${pidOrTag}`);
    }
  }
}
