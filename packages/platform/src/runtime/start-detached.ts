import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { readFileTail } from "../lib/bounded-read.js";
import { CommandError } from "../lib/command.js";
import { spawner } from "../lib/spawner.js";

/**
 * Runs a `run --detach`/`restore --detach` style command whose container inherits the command's
 * stdout/stderr. Those must be files, not pipes to us: the container keeps them open for its
 * whole life, so waiting for a pipe to close would never end.
 */
export async function startDetached(
  file: string,
  args: readonly string[],
  consoleLog: string,
  runtimeLog: string,
): Promise<void> {
  await mkdir(dirname(consoleLog), { recursive: true });
  const { code, error } = await spawner.run({ file, args, outputFile: consoleLog });
  if (code !== 0) {
    const why = [await tail(runtimeLog), await tail(consoleLog), error].filter(Boolean).join("\n");
    throw new CommandError([file, ...args], code, why);
  }
}

/** The last lines of a log, from its last 64 KiB only (the console is the sandbox's to fill). */
async function tail(path: string, lines = 8): Promise<string> {
  const text = (await readFileTail(path, 64 * 1024).catch(() => undefined))?.bytes.toString("utf8") ?? "";
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}
