import { type ParseArgsConfig, parseArgs } from "node:util";
import { CliError, CONNECTION_OPTIONS } from "../connection.js";

type Options = NonNullable<ParseArgsConfig["options"]>;

export interface Parsed {
  values: Record<string, string | boolean | string[] | undefined>;
  positionals: string[];
}

/**
 * Parses a subcommand's arguments with the connection options added; a mistake becomes a
 * CliError (exit code 2) pointing at the command's --help.
 */
export function parse(command: string, argv: string[], options: Options): Parsed {
  try {
    return parseArgs({
      args: argv,
      options: { ...CONNECTION_OPTIONS, ...options },
      allowPositionals: true,
      strict: true,
    });
  } catch (err) {
    throw new CliError(`${command}: ${(err as Error).message}; see '${command} --help'`, 2);
  }
}

/** `k=v` pairs (repeatable flags) as an object. */
export function pairs(command: string, flag: string, values: string[] | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const item of values ?? []) {
    const i = item.indexOf("=");
    if (i <= 0) throw new CliError(`${command}: --${flag} takes KEY=VALUE, got '${item}'`, 2);
    out[item.slice(0, i)] = item.slice(i + 1);
  }
  return out;
}

/** The positional argument at `index`, or a usage error naming it. */
export function required(command: string, positionals: string[], index: number, name: string): string {
  const value = positionals[index];
  if (!value) throw new CliError(`${command}: missing ${name}; see '${command} --help'`, 2);
  return value;
}

export function integer(command: string, flag: string, value: string | undefined): number | undefined {
  if (value === undefined) return undefined;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0)
    throw new CliError(`${command}: --${flag} takes a whole number, got '${value}'`, 2);
  return n;
}
