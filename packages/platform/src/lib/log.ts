import { pino } from "pino";
import pretty from "pino-pretty";

/**
 * The platform's logger: pino, one root per process and a child per component
 * (`log.child({ component: "orchestrator" })`). One field name per thing, everywhere:
 * `sandboxId`, `templateId`, `buildId`, `runtime`, `err` (an Error, serialised with its stack).
 */
export type Logger = pino.Logger;

export type LogLevel = "debug" | "info" | "warn" | "error" | "silent";
export type LogFormat = "json" | "pretty";

export interface LogOptions {
  level?: LogLevel;
  /** JSON lines for machines, coloured lines for a person; pretty when the destination is a terminal by default. */
  format?: LogFormat;
  /** Where lines go; stderr by default. */
  destination?: NodeJS.WritableStream;
}

export const LOG_LEVELS: readonly LogLevel[] = ["debug", "info", "warn", "error", "silent"];

/** The root logger of a process. */
export function createLogger(opts: LogOptions = {}): Logger {
  const destination = opts.destination ?? process.stderr;
  const isTTY = (destination as Partial<NodeJS.WriteStream>).isTTY ?? false;
  const format = opts.format ?? (isTTY ? "pretty" : "json");
  const options: pino.LoggerOptions = {
    level: opts.level ?? "info",
    base: undefined,
    timestamp: pino.stdTimeFunctions.isoTime,
    formatters: { level: (label) => ({ level: label }) },
    serializers: { err: pino.stdSerializers.err },
  };
  if (format === "json") return pino(options, destination);
  return pino(
    options,
    pretty({
      destination,
      sync: true,
      colorize: isTTY,
      translateTime: "HH:MM:ss.l",
      singleLine: true,
      ignore: "component",
      messageFormat: "{if component}{component}: {end}{msg}",
    }),
  );
}

/** A logger that writes nothing (for code run outside a platform, e.g. one-off tools). */
export const silentLogger: Logger = pino({ level: "silent" });
