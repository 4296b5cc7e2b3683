import { EventEmitter } from "node:events";
import { closeSync, readSync } from "node:fs";
import net from "node:net";
import { PassThrough, type Readable } from "node:stream";
import { loadAddon } from "../native/addon.js";
import { signalName } from "./signal-names.js";

/** What both of the addon's spawns take first (uid and gid -1: envd's own). */
type Program = [file: string, argv: string[], envp: string[], cwd: string, uid: number, gid: number];

/** The raw surface of `native/spawn.c`. */
interface SpawnAddon {
  /** [pid, stdin's write end or -1, stdout's read end, stderr's read end]; throws with `code`. */
  spawn(...args: [...Program, stdinPipe: boolean]): [number, number, number, number];
  /** [pid, the terminal's master fd]; throws with `code`. */
  spawnPty(...args: [...Program, cols: number, rows: number]): [number, number];
  resizePty(masterFd: number, cols: number, rows: number): void;
  /** undefined while the process runs, else [exit code, signal number] (one of them -1). */
  reap(pid: number): [number, number] | undefined;
  /** Calls back at each SIGCHLD (see there why not `process.on`). */
  onChildEnded(callback: () => void): void;
}

export interface SpawnRequest {
  file: string;
  /** Without argv[0]: the file is given as it. */
  args: string[];
  env: Record<string, string>;
  cwd: string;
  uid?: number;
  gid?: number;
  /** A pipe for input; otherwise stdin reads /dev/null. */
  stdin: boolean;
}

/** A program in a terminal of its own: input, output and size go through `terminal`. */
export interface TerminalRequest extends Omit<SpawnRequest, "stdin"> {
  cols: number;
  rows: number;
}

/**
 * A process started by `spawnChild`: what envd uses of a ChildProcess (its pid, pipes as
 * streams, one `exit` event with (code, signal name)).
 */
export interface PipedChild extends EventEmitter {
  readonly pid: number;
  readonly stdin: net.Socket | null;
  readonly stdout: net.Socket;
  readonly stderr: net.Socket;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

/**
 * A process started by `spawnInTerminal`: the terminal's master side (what its processes
 * write, read to the end once every one of them closed the terminal; what they read), its
 * size, and the same `exit` event as a PipedChild.
 */
export interface TerminalChild extends EventEmitter {
  readonly pid: number;
  readonly output: Readable;
  /** Destroying it closes the terminal: processes still holding it get a hang-up. */
  readonly input: net.Socket;
  resize(cols: number, rows: number): void;
  once(event: "exit", listener: (code: number | null, signal: NodeJS.Signals | null) => void): this;
}

class Child extends EventEmitter implements PipedChild {
  constructor(
    readonly pid: number,
    readonly stdin: net.Socket | null,
    readonly stdout: net.Socket,
    readonly stderr: net.Socket,
  ) {
    super();
  }
}

class TerminalProcess extends EventEmitter implements TerminalChild {
  readonly output: Readable;

  constructor(
    readonly pid: number,
    private readonly masterFd: number,
    readonly input: net.Socket,
  ) {
    super();
    this.output = terminalOutput(input, masterFd);
  }

  resize(cols: number, rows: number): void {
    // a terminal already closed has no size to change
    if (!this.input.destroyed) spawner().resizePty(this.masterFd, cols, rows);
  }
}

/** Children not yet reaped, by pid: each SIGCHLD collects those that ended. */
const running = new Map<number, EventEmitter>();
let addon: SpawnAddon | undefined;

/**
 * The addon, with its SIGCHLD watcher installed before the first child exists, so no child's
 * end can pass unheard.
 */
function spawner(): SpawnAddon {
  if (!addon) {
    addon = loadAddon<SpawnAddon>("envd_spawn.node");
    addon.onChildEnded(reapEnded);
  }
  return addon;
}

function reapEnded(): void {
  for (const [pid, child] of running) {
    const ended = addon!.reap(pid);
    if (!ended) continue;
    running.delete(pid);
    const [code, signo] = ended;
    child.emit("exit", code >= 0 ? code : null, signo >= 0 ? (signalName(signo) as NodeJS.Signals) : null);
  }
}

function programOf(req: Omit<SpawnRequest, "stdin">): Program {
  const envp = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
  return [req.file, [req.file, ...req.args], envp, req.cwd, req.uid ?? -1, req.gid ?? -1];
}

/**
 * Starts a program without forking envd (see native/spawn.c): its own session, default signals,
 * the ids and directory asked for, pipes for output. Throws like Node's spawn does (an Error
 * with the errno name as `code`) when the program cannot start.
 */
export function spawnChild(req: SpawnRequest): PipedChild {
  const [pid, stdinFd, stdoutFd, stderrFd] = spawner().spawn(...programOf(req), req.stdin);
  const child = new Child(
    pid,
    stdinFd >= 0 ? new net.Socket({ fd: stdinFd, readable: false, writable: true }) : null,
    new net.Socket({ fd: stdoutFd, readable: true, writable: false }),
    new net.Socket({ fd: stderrFd, readable: true, writable: false }),
  );
  // SIGCHLD's listener runs on the loop, after this returns: the child is known to it by then
  running.set(pid, child);
  return child;
}

/** libuv's pipe handle, which reads and writes any non-blocking stream fd (Node's own, internal). */
interface PipeBinding {
  Pipe: new (type: number) => { open(fd: number): number };
  constants: { SOCKET: number };
}

/**
 * A stream over a terminal's master fd. `net.Socket({ fd })` takes pipes and sockets only,
 * and a tty stream writes a master blockingly (a process that does not read its input would
 * stall envd): libuv's pipe handle reads and writes it like a pipe, without blocking.
 */
function masterStream(fd: number): net.Socket {
  const { Pipe, constants } = (process as unknown as { binding(name: string): PipeBinding }).binding(
    "pipe_wrap",
  );
  const handle = new Pipe(constants.SOCKET);
  const err = handle.open(fd);
  if (err < 0) throw new Error(`opening the terminal (fd ${fd}) as a stream failed: ${err}`);
  // half-open: libuv's end of the reading side must leave the fd open for terminalOutput
  return new net.Socket({
    handle,
    readable: true,
    writable: true,
    allowHalfOpen: true,
  } as net.SocketConstructorOpts);
}

/**
 * What a terminal's processes wrote, to the last byte. libuv ends a stream when the other side
 * hung up and a read came back short, but a terminal hands its output over in pieces, so a
 * short read does not mean none is left: the kernel still holds what the last writes put
 * there. At that end, the rest is read here (the fd is non-blocking: it answers EIO once
 * all is read, EAGAIN if someone still holds the terminal), then the terminal is closed.
 */
function terminalOutput(master: net.Socket, fd: number): Readable {
  const output = new PassThrough();
  master.pipe(output, { end: false });
  master.on("error", () => undefined); // EIO: every process let go of the terminal, all was read
  master.once("end", () => {
    const buffer = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      let n = 0;
      try {
        n = readSync(fd, buffer);
      } catch {
        break;
      }
      if (n <= 0) break;
      output.write(Buffer.from(buffer.subarray(0, n)));
    }
    master.destroy();
  });
  master.once("close", () => output.end());
  return output;
}

/**
 * Starts a program in a new pseudo-terminal without forking envd (see native/spawn.c): the
 * terminal is its controlling one and its standard streams, the rest as `spawnChild`.
 */
export function spawnInTerminal(req: TerminalRequest): TerminalChild {
  const [pid, masterFd] = spawner().spawnPty(...programOf(req), req.cols, req.rows);
  let terminal: net.Socket;
  try {
    terminal = masterStream(masterFd);
  } catch (err) {
    // nobody could ever read it: the process goes, and is reaped like any other
    closeSync(masterFd);
    process.kill(-pid, "SIGKILL");
    running.set(pid, new EventEmitter());
    throw err;
  }
  const child = new TerminalProcess(pid, masterFd, terminal);
  running.set(pid, child);
  return child;
}
