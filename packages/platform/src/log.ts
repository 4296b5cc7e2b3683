export type LogLevel = "debug" | "info" | "warn" | "error";
export type Logger = (level: LogLevel, msg: string, fields?: Record<string, unknown>) => void;

const ORDER: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40 };

/** Structured logs: one JSON object a line on stderr, at or above `min`. */
export function createLogger(component: string, min: LogLevel = "info"): Logger {
  return (level, msg, fields) => {
    if (ORDER[level] < ORDER[min]) return;
    process.stderr.write(
      `${JSON.stringify({ t: new Date().toISOString(), level, component, msg, ...fields })}\n`,
    );
  };
}
