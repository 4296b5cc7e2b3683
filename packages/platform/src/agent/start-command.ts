import { type CommandResult, type OutputHandler, runCommand, startCommand } from "./commands.js";
import type { EnvdTarget } from "./envd-http.js";

/** envd tag of a template's start command, so clients can find (and reconnect to) it. */
export const START_COMMAND_TAG = "start-cmd";

const READY_RETRY_MS = 200;

export interface StartCommandSpec {
  startCmd: string;
  /** Exits 0 once the start command is ready; without one the start command is not waited for. */
  readyCmd?: string;
  user: string;
  workdir?: string;
  /** Given to both commands; leave out where envd already has the sandbox's environment. */
  envVars?: Record<string, string>;
}

/**
 * Starts a template's start command in the background and waits until its ready command
 * succeeds. Fails when the start command exits unsuccessfully first, or the wait times out.
 */
export async function runStartCommand(
  target: EnvdTarget,
  spec: StartCommandSpec,
  opts: { timeoutMs: number; onOutput?: OutputHandler },
): Promise<void> {
  const base = { user: spec.user, cwd: spec.workdir, envs: spec.envVars };
  const proc = await startCommand(
    target,
    { ...base, cmd: spec.startCmd, tag: START_COMMAND_TAG },
    opts.onOutput,
  );
  try {
    const readyCmd = spec.readyCmd;
    if (!readyCmd) return;
    let exited: CommandResult | undefined;
    proc.ended.then(
      (result) => {
        exited = result;
      },
      () => undefined,
    );
    const deadline = Date.now() + opts.timeoutMs;
    for (;;) {
      const ready = await runCommand(target, { ...base, cmd: readyCmd });
      if (ready.exitCode === 0) return;
      if (exited && exited.exitCode !== 0) {
        throw new Error(
          `start command '${spec.startCmd}' ended (${exited.status}) before the ready command succeeded`,
        );
      }
      if (Date.now() >= deadline) {
        throw new Error(
          `ready command '${readyCmd}' did not succeed within ${Math.round(opts.timeoutMs / 1000)} s (${ready.status})`,
        );
      }
      await new Promise((r) => setTimeout(r, READY_RETRY_MS));
    }
  } finally {
    proc.detach();
  }
}
