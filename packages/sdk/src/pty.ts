import type { EnvdClient } from "@x/envd-client";
import { type CommandHandle, type Commands, startProcess } from "./commands.js";
import { fromConnectError } from "./errors.js";

export interface PtySize {
  cols: number;
  rows: number;
}

export interface PtyCreateOptions extends PtySize {
  /** Terminal output, as raw bytes. */
  onData: (data: Uint8Array) => void;
  envs?: Record<string, string>;
  cwd?: string;
  /** How long the terminal may stay open, in ms; 0 (the default) for no limit. */
  timeoutMs?: number;
}

/** Interactive terminals (bash in a pseudo-terminal) in a sandbox. */
export class Pty {
  /** @internal */
  constructor(
    private readonly envd: EnvdClient,
    private readonly commands: Commands,
  ) {}

  /** Starts a login bash in a terminal of the given size; `wait()` on the handle for its end. */
  create(opts: PtyCreateOptions): Promise<CommandHandle> {
    return startProcess(
      this.envd,
      this.commands,
      {
        process: {
          cmd: "/bin/bash",
          args: ["-i", "-l"],
          envs: { TERM: "xterm-256color", LANG: "C.UTF-8", ...opts.envs },
          cwd: opts.cwd,
        },
        pty: { size: { cols: opts.cols, rows: opts.rows } },
      },
      { onPty: opts.onData },
      opts.timeoutMs ?? 0,
      "Opening a terminal",
    );
  }

  /** Types into the terminal. */
  async sendInput(pid: number, data: string | Uint8Array): Promise<void> {
    const bytes = typeof data === "string" ? new TextEncoder().encode(data) : data;
    try {
      await this.envd.process.sendInput({
        process: { selector: { case: "pid", value: pid } },
        input: { input: { case: "pty", value: bytes } },
      });
    } catch (err) {
      throw fromConnectError(err, `Sending input to terminal ${pid}`);
    }
  }

  /** Changes the terminal's size. */
  async resize(pid: number, size: PtySize): Promise<void> {
    try {
      await this.envd.process.update({
        process: { selector: { case: "pid", value: pid } },
        pty: { size },
      });
    } catch (err) {
      throw fromConnectError(err, `Resizing terminal ${pid}`);
    }
  }

  /** Kills the terminal's shell; `false` when it was already gone. */
  kill(pid: number): Promise<boolean> {
    return this.commands.kill(pid);
  }
}
