import { channel } from "node:diagnostics_channel";
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

/**
 * Every ended span is also published here, for an embedding process (the bench) to read them
 * without debug logging; with no subscriber and debug off, spans cost nothing.
 */
export const SPANS_CHANNEL = "x:spans";
const published = channel(SPANS_CHANNEL);

/** What SPANS_CHANNEL carries. */
export interface SpanMessage {
  what: string;
  fields: Record<string, unknown>;
  ms: Record<string, number>;
}

export function spans(log: Logger, what: string, fields: Record<string, unknown> = {}): Spans {
  const logged = log.isLevelEnabled("debug");
  if (!logged && !published.hasSubscribers) return { mark: () => undefined, end: () => undefined };
  const t0 = performance.now();
  let last = t0;
  const steps: Record<string, number> = {};
  return {
    mark(step) {
      const t = performance.now();
      steps[step] = (steps[step] ?? 0) + t - last;
      last = t;
    },
    end(more = {}) {
      const ms: Record<string, number> = {};
      for (const [step, v] of Object.entries(steps)) ms[step] = Math.round(v * 10) / 10;
      ms.total = Math.round((performance.now() - t0) * 10) / 10;
      if (published.hasSubscribers)
        published.publish({ what, fields: { ...fields, ...more }, ms } satisfies SpanMessage);
      if (logged) {
        const rounded = Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, Math.round(v)]));
        log.debug({ ...fields, ...more, ms: rounded }, what);
      }
    },
  };
}
