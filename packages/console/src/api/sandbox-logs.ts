import type { Schemas } from "@x/platform-client";
import { useApi } from "./context.js";
import { unwrap } from "./errors.js";
import { useFollow } from "./follow.js";

export type SandboxLogEntry = Schemas["SandboxLogEntry"];
export type LogLevel = Schemas["LogLevel"];

const PAGE = 1000;

interface LogCursor {
  /** Unix ms of the newest entry read (the API's cursor is inclusive). */
  from?: number;
  /** Entries already read at exactly `from`, so the inclusive cursor adds no duplicates. */
  seen: string[];
}

const entryKey = (e: SandboxLogEntry) =>
  `${e.timestamp}\u0000${e.level}\u0000${e.message}\u0000${JSON.stringify(e.fields)}`;

/** A sandbox's logs, read from the start and then followed every 2 s. */
export function useSandboxLogs(id: string, level: LogLevel | "", search: string, enabled = true) {
  const { client } = useApi();
  return useFollow<SandboxLogEntry, LogCursor>(
    `${id}\u0000${level}\u0000${search}`,
    { seen: [] },
    async (cursor, signal) => {
      const { logs } = await unwrap(
        client.GET("/v2/sandboxes/{sandboxID}/logs", {
          params: {
            path: { sandboxID: id },
            query: {
              cursor: cursor.from,
              direction: "forward",
              limit: PAGE,
              level: level || undefined,
              search: search || undefined,
            },
          },
          signal,
        }),
      );
      const seen = new Set(cursor.seen);
      const fresh = logs.filter((e) => !seen.has(entryKey(e)));
      const last = logs.at(-1);
      if (!last) return { items: [], cursor, more: false };
      const from = Date.parse(last.timestamp);
      const atLast = logs.filter((e) => Date.parse(e.timestamp) === from).map(entryKey);
      return {
        items: fresh,
        cursor: { from, seen: from === cursor.from ? [...cursor.seen, ...atLast] : atLast },
        more: logs.length >= PAGE && fresh.length > 0,
      };
    },
    { intervalMs: 2000, keep: 5000, enabled },
  );
}

export type NetworkDecision = Schemas["SandboxNetworkDecision"];

/** A sandbox's egress decision log, followed every 2 s. */
export function useNetworkDecisions(id: string, enabled = true) {
  const { client } = useApi();
  return useFollow<NetworkDecision, number>(
    id,
    0,
    async (after, signal) => {
      const page = await unwrap(
        client.GET("/sandboxes/{sandboxID}/network/decisions", {
          params: { path: { sandboxID: id }, query: { after, limit: 1000 } },
          signal,
        }),
      );
      return { items: page.decisions, cursor: page.next, more: page.decisions.length >= 1000 };
    },
    { intervalMs: 2000, keep: 2000, enabled },
  );
}
