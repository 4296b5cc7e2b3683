import { useEffect, useState } from "react";
import { errorMessage } from "./errors.js";

export interface FollowPage<T, C> {
  items: T[];
  /** Where the next read starts. */
  cursor: C;
  /** The page was full: read again at once rather than after the interval. */
  more: boolean;
}

export interface Followed<T> {
  items: T[];
  loading: boolean;
  error?: string;
}

/**
 * Follows an append-only log by polling: reads from the cursor on, appends, and keeps the newest
 * `keep` entries. Starts over when `key` changes; stops while `enabled` is false.
 */
export function useFollow<T, C>(
  key: string,
  initial: C,
  read: (cursor: C, signal: AbortSignal) => Promise<FollowPage<T, C>>,
  opts: { intervalMs: number; keep: number; enabled?: boolean },
): Followed<T> {
  const [state, setState] = useState<Followed<T>>({ items: [], loading: true });
  const enabled = opts.enabled ?? true;
  // biome-ignore lint/correctness/useExhaustiveDependencies: `key` names everything `read` and `initial` depend on
  useEffect(() => {
    setState({ items: [], loading: true });
    if (!enabled) return;
    const controller = new AbortController();
    let cursor = initial;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const tick = async () => {
      let again = opts.intervalMs;
      try {
        const page = await read(cursor, controller.signal);
        cursor = page.cursor;
        setState((s) => ({
          items: page.items.length > 0 ? [...s.items, ...page.items].slice(-opts.keep) : s.items,
          loading: false,
        }));
        if (page.more) again = 0;
      } catch (err) {
        if (controller.signal.aborted) return;
        setState((s) => ({ ...s, loading: false, error: errorMessage(err) }));
      }
      if (!controller.signal.aborted) timer = setTimeout(tick, again);
    };
    void tick();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [key, enabled, opts.intervalMs, opts.keep]);
  return state;
}
