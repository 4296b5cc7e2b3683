import type { BuildLogEntry } from "../model/template.js";
import type { Store } from "../store/index.js";

const FLUSH_MS = 100;
const FLUSH_LINES = 200;

/**
 * A build's log as it is written: entries are appended to the store in small batches while the
 * build runs (status polling shows them within ~100 ms) and stay there afterwards.
 */
export class BuildLog {
  private pending: BuildLogEntry[] = [];
  private timer: NodeJS.Timeout | undefined;
  private writing: Promise<void> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly buildId: string,
    private readonly onError: (err: unknown) => void,
  ) {}

  write(level: "debug" | "info" | "warn" | "error", message: string, step?: string): void {
    this.pending.push({ timestamp: new Date().toISOString(), level, message, ...(step ? { step } : {}) });
    if (this.pending.length >= FLUSH_LINES) this.flushSoon(0);
    else this.flushSoon(FLUSH_MS);
  }

  info(message: string, step?: string): void {
    this.write("info", message, step);
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
    if (batch.length > 0) {
      this.writing = this.writing
        .then(() => this.store.templates.appendLogs(this.buildId, batch))
        .catch(this.onError);
    }
    return this.writing;
  }
}
