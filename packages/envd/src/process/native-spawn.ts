import { EventEmitter } from "node:events";
import net from "node:net";
import { loadAddon } from "../native/addon.js";
import { signalName } from "./signal-names.js";

/** The raw surface of `native/spawn.c`. */
interface SpawnAddon {
  /** [pid, stdin's write end or -1, stdout's read end, stderr's read end]; throws with `code`. */
  spawn(
    file: string,
    argv: string[],
    envp: string[],
    cwd: string,
    uid: number,
    gid: number,
    stdinPipe: boolean,
  ): [number, number, number, number];
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

/** Children not yet reaped, by pid: each SIGCHLD collects those that ended. */
const running = new Map<number, Child>();
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

/**
 * Starts a program without forking envd (see native/spawn.c): its own session, default signals,
 * the ids and directory asked for, pipes for output. Throws like Node's spawn does (an Error
 * with the errno name as `code`) when the program cannot start.
 */
export function spawnChild(req: SpawnRequest): PipedChild {
  const spawn = spawner();
  const envp = Object.entries(req.env).map(([k, v]) => `${k}=${v}`);
  const [pid, stdinFd, stdoutFd, stderrFd] = spawn.spawn(
    req.file,
    [req.file, ...req.args],
    envp,
    req.cwd,
    req.uid ?? -1,
    req.gid ?? -1,
    req.stdin,
  );
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
