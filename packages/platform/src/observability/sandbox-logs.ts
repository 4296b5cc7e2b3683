import { readFileTail } from "../lib/bounded-read.js";
import { lineCutMark, MAX_LINE_BYTES } from "../lib/line-splitter.js";
import type { Sandbox } from "../model/sandbox.js";
import type { Store } from "../store/index.js";

export type LogLevel = "debug" | "info" | "warn" | "error";

/** One entry of a sandbox's log: a lifecycle event from the store or a console line. */
export interface SandboxLogEntry {
  timestamp: string;
  level: LogLevel;
  message: string;
  fields: Record<string, string>;
}

/**
 * The entry as the legacy API's `logs[].line`: always a JSON object with a string `level` and
 * `logger`, as E2B's lines are. The `e2b` CLI parses each line and reads both (it crashed on a
 * line without a level).
 */
export function legacyLine(entry: SandboxLogEntry): string {
  return JSON.stringify({
    ...entry.fields,
    level: entry.level,
    logger: entry.fields.source ?? "platform",
    message: entry.message,
  });
}

export interface SandboxLogQuery {
  /** Unix ms, inclusive bounds. */
  from?: number;
  to?: number;
  /** forward: oldest first; backward: newest first. */
  direction: "forward" | "backward";
  limit: number;
  /** Entries at this level or more severe. */
  minLevel?: LogLevel;
  /** Case-sensitive substring of the message. */
  search?: string;
}

export interface SandboxLogSources {
  store: Store;
  sandbox: Sandbox;
  /**
   * The container's console, oldest file first (what is kept of earlier runs, then the running
   * one's): envd's structured stderr and the runtime's own lines.
   */
  consoleLogs: readonly string[];
}

const SEVERITY: Record<LogLevel, number> = { debug: 0, info: 1, warn: 2, error: 3 };
/** Only this much of the end of a sandbox's console is read: logs stay cheap however chatty a sandbox is. */
const CONSOLE_TAIL_BYTES = 8 * 1024 * 1024;
/** Events of one sandbox considered per request (they are few: one per lifecycle change). */
const MAX_EVENTS = 10_000;

function asLevel(value: unknown): LogLevel {
  return typeof value === "string" && value in SEVERITY ? (value as LogLevel) : "info";
}

function stringFields(
  values: Record<string, unknown>,
  extra: Record<string, string>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(values))
    out[key] = typeof value === "string" ? value : JSON.stringify(value);
  return { ...out, ...extra };
}

/** The newest `maxBytes` of the files taken as one text, oldest first, starting at a whole line. */
async function readTail(files: readonly string[], maxBytes: number): Promise<string> {
  const parts: Buffer[] = [];
  let left = maxBytes;
  let cut = false;
  for (const file of [...files].reverse()) {
    if (left === 0) break;
    const tail = await readFileTail(file, left);
    if (tail.bytes.length === 0) continue;
    // a file of its own ends with a whole line, even when its writer was stopped mid-line
    const bytes =
      tail.bytes[tail.bytes.length - 1] === 0x0a ? tail.bytes : Buffer.concat([tail.bytes, NEWLINE]);
    parts.unshift(bytes);
    left = Math.max(0, left - tail.bytes.length);
    cut = tail.cut;
    if (cut) break;
  }
  const text = Buffer.concat(parts).toString("utf8");
  // a tail that starts mid-line drops the partial line
  return cut ? text.slice(text.indexOf("\n") + 1) : text;
}

const NEWLINE = Buffer.from("\n");

/**
 * Console lines: JSON objects `{t, level, msg, ...}` from envd, anything else verbatim (the
 * runtime's, or envd's own crash output). A line without a time takes that of the line before.
 */
export function parseConsole(text: string, startedAt: string): SandboxLogEntry[] {
  const entries: SandboxLogEntry[] = [];
  let timestamp = startedAt;
  for (const whole of text.split("\n")) {
    // a line the sandbox wrote without end (its root can write to the console) is shown cut
    const line =
      whole.length > MAX_LINE_BYTES ? whole.slice(0, MAX_LINE_BYTES) + lineCutMark(MAX_LINE_BYTES) : whole;
    if (line.trim() === "") continue;
    let parsed: unknown;
    try {
      parsed = JSON.parse(line);
    } catch {
      parsed = undefined;
    }
    if (
      parsed &&
      typeof parsed === "object" &&
      !Array.isArray(parsed) &&
      typeof (parsed as { msg?: unknown }).msg === "string"
    ) {
      const { t, level, msg, ...rest } = parsed as Record<string, unknown>;
      if (typeof t === "string" && !Number.isNaN(Date.parse(t))) timestamp = new Date(t).toISOString();
      entries.push({
        timestamp,
        level: asLevel(level),
        message: msg as string,
        fields: stringFields(rest, { source: "envd" }),
      });
    } else {
      entries.push({ timestamp, level: "info", message: line, fields: { source: "console" } });
    }
  }
  return entries;
}

/** A sandbox's log: its lifecycle events and console lines, merged by time and filtered. */
export async function readSandboxLogs(
  sources: SandboxLogSources,
  query: SandboxLogQuery,
): Promise<SandboxLogEntry[]> {
  const { store, sandbox } = sources;
  const events = await store.events.forSandbox(sandbox.id, {
    from: query.from === undefined ? undefined : new Date(query.from).toISOString(),
    to: query.to === undefined ? undefined : new Date(query.to).toISOString(),
    order: query.direction === "forward" ? "asc" : "desc",
    limit: MAX_EVENTS,
  });
  const entries: SandboxLogEntry[] = events.map((e) => ({
    timestamp: e.at,
    level: "info",
    message: e.type.replaceAll(".", " ").replaceAll("_", " "),
    fields: stringFields(e.data, { source: "platform", event: e.type }),
  }));
  entries.push(...parseConsole(await readTail(sources.consoleLogs, CONSOLE_TAIL_BYTES), sandbox.startedAt));

  const minSeverity = query.minLevel ? SEVERITY[query.minLevel] : 0;
  const wanted = entries.filter((entry) => {
    const at = Date.parse(entry.timestamp);
    return (
      (query.from === undefined || at >= query.from) &&
      (query.to === undefined || at <= query.to) &&
      SEVERITY[entry.level] >= minSeverity &&
      (query.search === undefined || entry.message.includes(query.search))
    );
  });
  // stable sort: entries of the same millisecond keep the order they were written in
  wanted.sort((a, b) => Date.parse(a.timestamp) - Date.parse(b.timestamp));
  if (query.direction === "backward") wanted.reverse();
  return wanted.slice(0, query.limit);
}
