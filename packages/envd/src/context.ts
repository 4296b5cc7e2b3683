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

export function createLogger(): EnvdContext["log"] {
  return (level, msg, fields) => {
    process.stderr.write(`${JSON.stringify({ t: new Date().toISOString(), level, msg, ...fields })}\n`);
  };
}

/** Connect streams send a keepalive this often: the client's `Keepalive-Ping-Interval` (s) or 50 s. */
export function keepaliveIntervalMs(header: Headers): number {
  const seconds = Number(header.get("keepalive-ping-interval"));
  return Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 50_000;
}

export { IdNames };
