import type { Readable } from "node:stream";

/** Where a command writes and reads; the process's streams by default, captured in tests. */
export interface Io {
  out(text: string | Uint8Array): void;
  err(text: string | Uint8Array): void;
  /** Input to forward to `x sandbox exec`; absent when stdin is a terminal (or in tests). */
  stdin?: Readable;
  /** stderr is a terminal: spinners and progress bars instead of plain lines. */
  tty?: boolean;
}

export const processIo: Io = {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
  get stdin() {
    return process.stdin.isTTY ? undefined : process.stdin;
  },
  get tty() {
    return Boolean(process.stderr.isTTY);
  },
};

/** Prints `value` as JSON for scripts, or `text` for people. */
export function print(io: Io, json: boolean, value: unknown, text: string | (() => string)): void {
  io.out(json ? `${JSON.stringify(value, null, 2)}\n` : typeof text === "function" ? text() : text);
}
