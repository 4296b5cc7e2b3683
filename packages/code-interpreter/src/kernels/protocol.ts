/**
 * The line protocol between the code interpreter's server and its kernel processes, one JSON
 * object per line. Requests go to the kernel's stdin; events come back on the kernel's fd 3, so
 * what the kernel's own stdout and stderr carry (a JavaScript `console.log`, a subprocess of a
 * bash cell) stays the cell's output. Jupyter kernels sit behind a bridge (python/) that speaks
 * this protocol and relays their messages.
 */

export type KernelRequest =
  | { op: "execute"; id: string; code: string; silent?: boolean }
  | { op: "interrupt" }
  | { op: "shutdown" };

/** MIME type → value, as Jupyter's display data has it. */
export type MimeBundle = Record<string, unknown>;

export type KernelEvent =
  | { ev: "ready" }
  | { ev: "stream"; id: string; name: "stdout" | "stderr"; text: string }
  | { ev: "result"; id: string; main: boolean; data: MimeBundle }
  | { ev: "error"; id: string; name: string; value: string; traceback: string[] }
  | { ev: "count"; id: string; n: number }
  | { ev: "done"; id: string }
  /** The kernel cannot go on (its Jupyter kernel died, say); the server restarts it. */
  | { ev: "fatal"; message: string };

/** The file descriptor kernels write events to. */
export const EVENTS_FD = 3;

/**
 * Written by a kernel to its stdout and to its stderr after each execution's last output and
 * before its `done`: the server ends the execution only once it has read both, so output that
 * was still in a pipe when `done` arrived on fd 3 is never lost or given to the next cell.
 */
export function endMarker(id: string): string {
  return `\u0000end:${id}\u0000`;
}
