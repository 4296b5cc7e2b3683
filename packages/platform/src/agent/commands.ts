import type { StartResponse } from "@x/envd-client";
import { LineSplitter } from "../lib/line-splitter.js";
import { type EnvdTarget, envdClient } from "./envd-http.js";

export interface ShellCommand {
  /** Shell text, run like the public client runs commands: `bash -l -c` (`sh -c` without bash). */
  cmd: string;
  user: string;
  cwd?: string;
  envs?: Record<string, string>;
  /** Tag of the process in envd (lets clients find and reconnect to it). */
  tag?: string;
}

export interface CommandResult {
  exitCode: number;
  /** envd's description of how it ended, e.g. "exit status 1" or "signal: killed". */
  status: string;
}

export type OutputHandler = (line: string, stream: "stdout" | "stderr") => void;

/** Images without bash (busybox, alpine) still run steps: fall back to sh. */
const SHELL_SCRIPT =
  'if command -v bash >/dev/null 2>&1; then exec bash -l -c "$1"; else exec sh -c "$1"; fi';

function startRequest(c: ShellCommand) {
  return {
    process: { cmd: "/bin/sh", args: ["-c", SHELL_SCRIPT, "sh", c.cmd], envs: c.envs ?? {}, cwd: c.cwd },
    tag: c.tag,
    stdin: false,
  };
}

function callOptions(user: string, signal?: AbortSignal) {
  // envd takes the user from Basic auth, as the public client sends it
  return { headers: { Authorization: `Basic ${Buffer.from(`${user}:`).toString("base64")}` }, signal };
}

/** Reads a process's event stream to its end, handing output lines on; resolves with how it ended. */
async function follow(
  stream: AsyncIterable<StartResponse>,
  onOutput?: OutputHandler,
  onStart?: () => void,
): Promise<CommandResult> {
  const out = new LineSplitter((l) => onOutput?.(l, "stdout"));
  const err = new LineSplitter((l) => onOutput?.(l, "stderr"));
  for await (const message of stream) {
    const event = message.event?.event;
    if (event?.case === "start") onStart?.();
    // output nobody reads is not split at all
    if (event?.case === "data" && onOutput) {
      const { output } = event.value;
      if (output.case === "stdout") out.push(output.value);
      if (output.case === "stderr") err.push(output.value);
    }
    if (event?.case === "end") {
      out.end();
      err.end();
      const end = event.value;
      return { exitCode: end.exitCode, status: end.error ? `${end.status}: ${end.error}` : end.status };
    }
  }
  throw new Error("envd closed the process stream before the process ended");
}

/** Runs a command to its end in the sandbox, streaming its output lines to `onOutput`. */
export async function runCommand(
  target: EnvdTarget,
  c: ShellCommand,
  opts: { onOutput?: OutputHandler; signal?: AbortSignal } = {},
): Promise<CommandResult> {
  const stream = envdClient(target).process.start(startRequest(c), callOptions(c.user, opts.signal));
  return follow(stream, opts.onOutput);
}

/** A command left running in the sandbox: `ended` settles when it exits. */
export interface BackgroundProcess {
  ended: Promise<CommandResult>;
  /** Stops following its output; the process keeps running. */
  detach(): void;
}

/** Starts a command that keeps running after the call; resolves once envd has started it. */
export async function startCommand(
  target: EnvdTarget,
  c: ShellCommand,
  onOutput?: OutputHandler,
): Promise<BackgroundProcess> {
  const following = new AbortController();
  const stream = envdClient(target).process.start(startRequest(c), callOptions(c.user, following.signal));
  let started!: () => void;
  const start = new Promise<void>((resolve) => {
    started = resolve;
  });
  const ended = follow(stream, onOutput, started);
  // a stream that fails before `start` fails the call; later failures only end the following
  await Promise.race([start, ended]);
  ended.catch(() => undefined);
  return { ended, detach: () => following.abort() };
}
