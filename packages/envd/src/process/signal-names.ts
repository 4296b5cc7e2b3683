import os from "node:os";

const NAMES = new Map(Object.entries(os.constants.signals).map(([name, n]) => [n, name]));

/** A signal's name (SIGKILL…) from its number, as Node names them; `signal N` when it has none. */
export function signalName(signo: number): string {
  return NAMES.get(signo) ?? `signal ${signo}`;
}
