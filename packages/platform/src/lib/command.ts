import { access, constants } from "node:fs/promises";
import { LineSplitter } from "./line-splitter.js";
import { spawnOwned } from "./owned-process.js";
import { spawner } from "./spawner.js";

/** A host command that exited non-zero (or could not start); keeps stderr because that is where runc, runsc and ip explain themselves. */
export class CommandError extends Error {
  constructor(
    readonly argv: readonly string[],
    readonly exitCode: number | string | null,
    readonly stderr: string,
  ) {
    super(`${argv.join(" ")} failed (${exitCode ?? "signal"}): ${stderr.trim() || "no output"}`);
    this.name = "CommandError";
  }
}

export interface CommandOptions {
  /** Written to the command's stdin, then stdin is closed. */
  input?: string;
  timeoutMs?: number;
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** The most of stdout (and of stderr) read; past it the command fails (see SpawnRequest). */
  maxOutputBytes?: number;
}

/** Runs a command to completion (through the platform's command helper) and returns its stdout. */
export async function command(
  file: string,
  args: readonly string[],
  opts: CommandOptions = {},
): Promise<string> {
  const result = await spawner.run({ file, args, ...opts, timeoutMs: opts.timeoutMs ?? 120_000 });
  if (result.code === 0) return result.stdout;
  throw new CommandError([file, ...args], result.code, result.stderr || result.error || "");
}

/**
 * Runs a long command and hands every output line (stdout and stderr) to `onLine` as it arrives;
 * used where progress matters more than the captured text (debootstrap, apt).
 */
export function commandLines(
  file: string,
  args: readonly string[],
  onLine: (line: string) => void,
  opts: Pick<CommandOptions, "env"> & { signal?: AbortSignal } = {},
): Promise<void> {
  return new Promise((resolve, reject) => {
    // dies with the platform: a build cut short by a kill does not go on alone
    const child = spawnOwned(file, args, {
      stdio: ["ignore", "pipe", "pipe"],
      env: opts.env,
      signal: opts.signal,
    });
    const tail: string[] = [];
    // lines cut at a length: a registry or an image decides what some of these tools print
    const feed = (stream: NodeJS.ReadableStream) => {
      const lines = new LineSplitter(emit, { cr: true });
      stream.on("data", (chunk: Buffer) => lines.push(chunk));
      stream.on("end", () => lines.end());
    };
    const emit = (line: string) => {
      tail.push(line);
      if (tail.length > 20) tail.shift();
      onLine(line);
    };
    feed(child.stdout!);
    feed(child.stderr!);
    child.on("error", (err) => reject(new CommandError([file, ...args], null, err.message)));
    child.on("close", (code, signal) => {
      if (code === 0) resolve();
      else reject(new CommandError([file, ...args], code ?? signal, tail.join("\n")));
    });
  });
}

/** Resolves a binary on PATH (plus the sbin dirs, which a non-login PATH may lack) or throws with the install hint. */
export async function requireBinary(name: string, installHint: string): Promise<string> {
  const dirs = [
    ...(process.env.PATH ?? "").split(":"),
    "/usr/local/sbin",
    "/usr/sbin",
    "/sbin",
    "/usr/bin",
    "/bin",
  ];
  for (const dir of dirs) {
    if (!dir) continue;
    const candidate = `${dir}/${name}`;
    try {
      await access(candidate, constants.X_OK);
      return candidate;
    } catch {
      // not in this dir
    }
  }
  throw new Error(`${name} not found on this host; install it with: ${installHint}`);
}
