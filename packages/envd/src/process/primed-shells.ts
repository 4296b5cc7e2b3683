import { type ChildProcess, spawn } from "node:child_process";
import type { Writable } from "node:stream";
import type { Launch } from "./launch.js";

/**
 * The e2b client runs every command as `/bin/bash -l -c CMD`: a new bash that first reads the
 * login profile. A primed shell is that bash started ahead of time, as the same user, in the
 * same directory and environment: it runs the profile and then waits on file descriptor 3 for
 * the command, which it evaluates as if given with -c. A command then costs neither the exec of
 * bash nor its profile (under gVisor those are tens of milliseconds each). What the profile
 * prints stays in the pipes until the command's stream reads it, as it would be in its output.
 */
const PRIMER = `IFS= read -r -d '' __x_cmd <&3; exec 3<&-; eval "unset __x_cmd; $__x_cmd"`;

/** Where and how a shell would run: a primed shell serves only a command that would run the same. */
export interface ShellPlan {
  launch: Launch;
  cwd: string;
  env: Record<string, string>;
}

interface Primed {
  key: string;
  child: ChildProcess;
  commands: Writable;
}

/** Whether a Start request is the e2b client's shell command (and nothing else that a primed shell could not honour). */
export function isLoginShellCommand(
  cmd: string,
  args: readonly string[],
  envs: Record<string, string>,
): boolean {
  return (
    (cmd === "/bin/bash" || cmd === "bash") &&
    args.length === 3 &&
    args[0] === "-l" &&
    args[1] === "-c" &&
    Object.keys(envs).length === 0
  );
}

const keyOf = (plan: ShellPlan) =>
  JSON.stringify([
    plan.launch.file,
    plan.launch.uid,
    plan.launch.gid,
    plan.cwd,
    Object.entries(plan.env).sort(),
  ]);

/** At most one primed shell, for the plan commands last ran with; it is replaced as soon as it is used. */
export class PrimedShells {
  private primed: Primed | undefined;

  /**
   * A primed shell for `plan` that runs `cmd`, or undefined when none matches (the caller then
   * spawns as usual). Either way a shell for the same plan is primed for the next command.
   */
  take(plan: ShellPlan, cmd: string, stdin: boolean): ChildProcess | undefined {
    const key = keyOf(plan);
    const primed = this.primed;
    this.primed = undefined;
    setImmediate(() => this.prime(plan, key));
    if (!primed || primed.key !== key || primed.child.exitCode !== null || primed.child.signalCode !== null) {
      if (primed) kill(primed.child);
      return undefined;
    }
    primed.commands.end(`${cmd}\0`);
    if (!stdin) primed.child.stdin?.end();
    return primed.child;
  }

  /** The environment changed (`/init`): a shell primed with the old one is of no use. */
  invalidate(): void {
    if (this.primed) kill(this.primed.child);
    this.primed = undefined;
  }

  /** Starts a shell for `plan` unless one is primed already. */
  prime(plan: ShellPlan, key = keyOf(plan)): void {
    if (this.primed) return;
    const child = spawn(plan.launch.file, [...plan.launch.args.slice(0, -1), PRIMER], {
      cwd: plan.cwd,
      env: plan.env,
      uid: plan.launch.uid,
      gid: plan.launch.gid,
      detached: true,
      stdio: ["pipe", "pipe", "pipe", "pipe"],
    });
    if (child.pid === undefined) return;
    child.on("error", () => undefined);
    const commands = child.stdio[3] as Writable;
    commands.on("error", () => undefined);
    child.stdin?.on("error", () => undefined);
    child.once("exit", () => {
      if (this.primed?.child === child) this.primed = undefined;
    });
    this.primed = { key, child, commands };
  }
}

function kill(child: ChildProcess): void {
  try {
    process.kill(-(child.pid as number), "SIGKILL");
  } catch {
    // gone already
  }
}
