import type { Logger } from "./log.js";

/**
 * Where the milliseconds of one operation go: `mark(name)` closes the step since the previous
 * mark, `end()` logs every step's duration at debug level in one line (e.g. a boot:
 * `{network: 12, rootfs: 9, runtime: 48, envd: 95, total: 164}`).
 */
export interface Spans {
  mark(step: string): void;
  end(fields?: Record<string, unknown>): void;
}

export function spans(log: Logger, what: string, fields: Record<string, unknown> = {}): Spans {
  if (!log.isLevelEnabled("debug")) return { mark: () => undefined, end: () => undefined };
  const t0 = performance.now();
  let last = t0;
  const steps: Record<string, number> = {};
  return {
    mark(step) {
      const t = performance.now();
      steps[step] = Math.round((steps[step] ?? 0) + t - last);
      last = t;
    },
    end(more = {}) {
      log.debug({ ...fields, ...more, ms: { ...steps, total: Math.round(performance.now() - t0) } }, what);
    },
  };
}
