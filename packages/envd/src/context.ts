import { fstatSync, writeSync } from "node:fs";
import type { ProcessManager } from "./process/manager.js";
import type { EnvdState } from "./state.js";
import { IdNames } from "./users.js";

/** What every service of one envd shares. */
export interface EnvdContext {
  state: EnvdState;
  /** uid/gid → names, for entry owner and group. */
  names: IdNames;
  /** Processes started here; they outlive the requests that started them. */
  processes: ProcessManager;
  log: (level: "info" | "warn" | "error", msg: string, fields?: Record<string, unknown>) => void;
}

/** A logger writing JSON lines to `write` (stderr by default, see stderrWriter). */
export function createLogger(write: (line: string) => void = stderrWriter()): EnvdContext["log"] {
  return (level, msg, fields) => {
    write(`${JSON.stringify({ t: new Date().toISOString(), level, msg, ...clipped(fields) })}\n`);
  };
}

/** The longest string field a log line carries whole: a client's values (a process's tag) are its own to size. */
const MAX_FIELD_CHARS = 1024;

function clipped(fields: Record<string, unknown> | undefined): Record<string, unknown> | undefined {
  if (!fields) return fields;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) {
    out[key] =
      typeof value === "string" && value.length > MAX_FIELD_CHARS
        ? `${value.slice(0, MAX_FIELD_CHARS)}… (${value.length} characters)`
        : value;
  }
  return out;
}

/**
 * In a sandbox stderr is the console log, a file the platform trims and that can be full (it
 * lives on the sandbox's own disk): a line that cannot be written is dropped, and the next one
 * is tried again. process.stderr would end envd on the first failed write (an 'error' nobody
 * handles), or write nothing more after it.
 */
function stderrWriter(): (line: string) => void {
  let isFile = false;
  try {
    isFile = fstatSync(2).isFile();
  } catch {
    // no stderr at all
  }
  if (!isFile) return (line) => process.stderr.write(line);
  return (line) => {
    try {
      writeSync(2, line);
    } catch {
      // ENOSPC, EFBIG: this line is lost
    }
  };
}

/** Connect streams send a keepalive this often: the client's `Keepalive-Ping-Interval` (s) or 50 s. */
export function keepaliveIntervalMs(header: Headers): number {
  const seconds = Number(header.get("keepalive-ping-interval"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 50_000;
}

export { IdNames };
