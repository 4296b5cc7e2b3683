/**
 * The wire between the sudo stand-in (`sudo` in a gVisor sandbox) and envd: frames of one type
 * byte, a 32-bit big-endian length and the payload, both ways over one Unix socket.
 */

/** The abstract Unix socket envd listens on (no file: nothing to leave behind in a snapshot). */
export const SUDO_SOCKET = "\0x-envd-sudo";

export const Frame = {
  /** stand-in → envd: the request (JSON, SudoRequest), first and once. */
  request: 0x52,
  /** envd → stand-in: a file only the claimed uid (or root) can read; its content proves the claim. */
  challenge: 0x43,
  /** stand-in → envd: the content of the challenge's file. */
  proof: 0x50,
  /** stand-in → envd: bytes for the command's stdin (or its terminal). */
  stdin: 0x49,
  /** stand-in → envd: stdin reached its end. */
  stdinEnd: 0x45,
  /** stand-in → envd: a signal the stand-in received, by name (SIGINT…). */
  signal: 0x53,
  /** stand-in → envd: the terminal's new size (JSON {cols, rows}). */
  resize: 0x57,
  /** envd → stand-in: command output for the stand-in's stdout. */
  stdout: 0x4f,
  /** envd → stand-in: output for its stderr (sudo's own messages too). */
  stderr: 0x65,
  /** envd → stand-in: the end (JSON {code}); the stand-in exits with that code. */
  exit: 0x58,
} as const;

export interface SudoRequest {
  /** Who is asking, as the stand-in says; envd has it proven (see SudoServer). */
  uid: number;
  /** The command and its arguments; empty with `shell` or `login` for an interactive shell. */
  argv: string[];
  /** The caller's environment and working directory. */
  env: Record<string, string>;
  cwd: string;
  /** Run as this account (sudo -u); root by default. */
  user?: string;
  /** sudo -i: the target's login shell, in its home. */
  login?: boolean;
  /** sudo -s: a shell ($SHELL or the target's). */
  shell?: boolean;
  /** sudo -E: keep the caller's environment. */
  preserveEnv?: boolean;
  /** sudo -H: HOME is the target's (the default here as in sudo 1.9). */
  setHome?: boolean;
  /** sudo -n: never prompt (nothing here ever prompts: a rule needing a password fails). */
  nonInteractive?: boolean;
  /** sudo -l / -v: list the caller's rights, or only check them. */
  list?: boolean;
  validate?: boolean;
  /** Set when the caller's stdin is a terminal: the command gets one of this size. */
  tty?: { cols: number; rows: number };
}

export function frame(type: number, payload: Buffer | string = Buffer.alloc(0)): Buffer {
  const body = typeof payload === "string" ? Buffer.from(payload) : payload;
  const head = Buffer.alloc(5);
  head.writeUInt8(type, 0);
  head.writeUInt32BE(body.length, 1);
  return Buffer.concat([head, body]);
}

/** Splits a byte stream into frames as they complete. */
export class FrameReader {
  private buffered: Buffer = Buffer.alloc(0);

  constructor(private readonly onFrame: (type: number, payload: Buffer) => void) {}

  push(chunk: Buffer): void {
    this.buffered = this.buffered.length ? Buffer.concat([this.buffered, chunk]) : chunk;
    while (this.buffered.length >= 5) {
      const length = this.buffered.readUInt32BE(1);
      if (this.buffered.length < 5 + length) return;
      const type = this.buffered.readUInt8(0);
      const payload = this.buffered.subarray(5, 5 + length);
      this.buffered = this.buffered.subarray(5 + length);
      this.onFrame(type, payload);
    }
  }
}
