import { formatBytes } from "../lib/bounded-read.js";
import { MAX_LINE_BYTES } from "../lib/line-splitter.js";
import type { BuildLogEntry } from "../model/template.js";
import type { Store } from "../store/index.js";

const FLUSH_MS = 100;
/** Rows per insert (and the batch size that flushes at once): well under SQLite's 32766 parameters. */
const FLUSH_LINES = 200;
/**
 * The longest message kept; longer ones (a step's failure with a tool's output in it) are cut.
 * An output line the host cut already (64 KiB and its mark, lib/line-splitter.ts) fits.
 */
const MAX_MESSAGE_BYTES = MAX_LINE_BYTES + 1024;

/** How much of its commands' output one build keeps in its log. */
export interface BuildLogLimits {
  maxLines: number;
  maxBytes: number;
}

export const DEFAULT_BUILD_LOG_LIMITS: BuildLogLimits = { maxLines: 50_000, maxBytes: 16 * 1024 * 1024 };

/** The limits a platform's settings give (`buildLogMaxLines`, `buildLogMaxMB`), the defaults for the rest. */
export function buildLogLimits(o: { buildLogMaxLines?: number; buildLogMaxMB?: number }): BuildLogLimits {
  return {
    maxLines: o.buildLogMaxLines ?? DEFAULT_BUILD_LOG_LIMITS.maxLines,
    maxBytes:
      o.buildLogMaxMB === undefined ? DEFAULT_BUILD_LOG_LIMITS.maxBytes : o.buildLogMaxMB * 1024 * 1024,
  };
}

type Level = "debug" | "info" | "warn" | "error";

/**
 * A build's log as it is written: entries are appended to the store in small batches while the
 * build runs (status polling shows them within ~100 ms) and stay there afterwards. What the
 * build's commands print (`output`) is kept up to the build's limits; past them one line says
 * so and the rest is left out, while the build goes on to its own result. The platform's own
 * lines (each step, the outcome) are always kept.
 */
export class BuildLog {
  private pending: BuildLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();
  private outputLines = 0;
  private outputBytes = 0;
  private truncated = false;

  constructor(
    private readonly store: Store,
    private readonly buildId: string,
    private readonly onError: (err: unknown) => void,
    private readonly limits: BuildLogLimits = DEFAULT_BUILD_LOG_LIMITS,
  ) {}

  /** A line of the platform's own. */
  write(level: Level, message: string, step?: string): void {
    this.append(level, storable(message), step);
  }

  info(message: string, step?: string): void {
    this.write("info", message, step);
  }

  /** A line a build's command, pull or copy printed: kept while the build is within its limits. */
  output(message: string, step?: string): void {
    if (this.truncated) return;
    const text = storable(message);
    const bytes = Buffer.byteLength(text);
    if (this.outputLines + 1 > this.limits.maxLines || this.outputBytes + bytes > this.limits.maxBytes) {
      this.truncated = true;
      const { maxLines, maxBytes } = this.limits;
      this.write(
        "warn",
        `output truncated: this build's log keeps ${maxLines} lines or ${formatBytes(maxBytes)} of output, the rest is left out`,
        step,
      );
      return;
    }
    this.outputLines++;
    this.outputBytes += bytes;
    this.append("info", text, step);
  }

  private append(level: Level, message: string, step: string | undefined): void {
    this.pending.push({ timestamp: new Date().toISOString(), level, message, ...(step ? { step } : {}) });
    if (this.pending.length >= FLUSH_LINES) this.flushSoon(0);
    else this.flushSoon(FLUSH_MS);
  }

  private flushSoon(ms: number): void {
    if (this.timer && ms > 0) return;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => void this.flush(), ms);
  }

  /** Writes everything logged so far; resolves once it is in the store. */
  flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.pending;
    this.pending = [];
    for (let i = 0; i < batch.length; i += FLUSH_LINES) {
      const rows = batch.slice(i, i + FLUSH_LINES);
      this.writing = this.writing
        .then(() => this.store.templates.appendLogs(this.buildId, rows))
        .catch(this.onError);
    }
    return this.writing;
  }
}

/** At most MAX_MESSAGE_BYTES, and no NUL (PostgreSQL's text refuses it; `head -c 1M /dev/zero` prints them). */
function storable(message: string): string {
  const cut =
    Buffer.byteLength(message) > MAX_MESSAGE_BYTES
      ? `${Buffer.from(message).subarray(0, MAX_MESSAGE_BYTES).toString("utf8")} [cut at ${formatBytes(MAX_MESSAGE_BYTES)}]`
      : message;
  return cut.includes("\0") ? cut.replaceAll("\0", "\uFFFD") : cut;
}
