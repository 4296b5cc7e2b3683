import { checkpointable } from "./checkpointable.js";
import { type CommandResult, runCommand, type ShellCommand } from "./commands.js";
import type { EnvdTarget } from "./envd-http.js";
import { envdAnswers } from "./health.js";
import { type EnvdInit, initEnvd } from "./init.js";
import { runStartCommand, type StartCommandSpec } from "./start-command.js";

/**
 * The calls the orchestrator makes to envd inside a sandbox, as one port: envd over HTTP in
 * the platform (`envdAgent`), an in-memory fake in unit tests (orchestrator/testing).
 */
export interface SandboxAgentPort {
  /** envd's /init: the sandbox's environment, identity and (when it differs) its own token. */
  init(target: EnvdTarget, init: EnvdInit): Promise<void>;
  /** A template's start command, started in the background and waited for until it is ready. */
  runStartCommand(target: EnvdTarget, spec: StartCommandSpec, opts: { timeoutMs: number }): Promise<void>;
  /** Runs a command to its end (e.g. `sync` before a snapshot). */
  runCommand(target: EnvdTarget, command: ShellCommand): Promise<CommandResult>;
  /** Whether gVisor could save the sandbox's sockets now (see checkpointable.ts). */
  checkpointable(target: EnvdTarget): Promise<boolean>;
  /** Whether envd answers its health check right now. */
  answers(address: string | undefined): Promise<boolean>;
}

/** envd, reached over HTTP at the sandbox's address. */
export const envdAgent: SandboxAgentPort = {
  init: initEnvd,
  runStartCommand: (target, spec, opts) => runStartCommand(target, spec, opts),
  runCommand: (target, command) => runCommand(target, command),
  checkpointable,
  answers: envdAnswers,
};
