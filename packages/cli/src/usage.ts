import { CliError } from "./connection.js";

/** The exit code of a usage mistake (an unknown flag, a missing argument, a bad value). */
export const USAGE_EXIT = 2;

/** A usage mistake of `command`, pointing at its help. */
export function usageError(command: string, message: string): CliError {
  const said = message.startsWith(`${command} `) ? message : `${command}: ${message}`;
  return new CliError(`${said}; see '${command} --help'`, USAGE_EXIT);
}

/**
 * Runs the reading of a command's arguments (and the environment standing in for them):
 * whatever it throws is a usage mistake, nothing having been done yet.
 */
export function parsing<T>(command: string, read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof CliError) throw err;
    throw usageError(command, (err as Error).message);
  }
}

/** Whether an error is node:util's parseArgs refusing the arguments (an unknown flag, a missing value). */
export function isParseArgsError(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === "string" && code.startsWith("ERR_PARSE_ARGS_");
}
