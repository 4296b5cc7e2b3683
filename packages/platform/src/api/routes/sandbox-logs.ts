import type { Sandbox } from "../../model/sandbox.js";
import { legacyLine, readSandboxLogs, type SandboxLogQuery } from "../../observability/sandbox-logs.js";
import type { Store } from "../../store/index.js";
import type { HandlersFor } from "../handler.js";
import { ownedSandbox } from "./access.js";

export interface SandboxLogsRoutesOptions {
  store: Store;
  /** Paths of a sandbox's console logs, oldest first. */
  consoleLogs(sandboxId: string): string[];
}

/** Times are compared as ISO text, which sorts correctly up to the year 9999: later means "the end of time". */
const MAX_TIME_MS = Date.parse("9999-12-31T23:59:59.999Z");

const clampTime = (ms: number | undefined) => (ms === undefined ? undefined : Math.min(ms, MAX_TIME_MS));

/** A sandbox's logs: lifecycle events from the store and its console (envd and runtime lines). */
export function sandboxLogsRoutes(
  o: SandboxLogsRoutesOptions,
): HandlersFor<"getSandboxLogsLegacy" | "getSandboxLogs"> {
  const read = (row: Sandbox, query: SandboxLogQuery) =>
    readSandboxLogs({ store: o.store, sandbox: row, consoleLogs: o.consoleLogs(row.id) }, query);

  return {
    getSandboxLogsLegacy: async (r) => {
      const row = await ownedSandbox(o.store, r);
      const entries = await read(row, {
        from: clampTime(r.params.start),
        direction: "forward",
        limit: r.params.limit ?? 1000,
      });
      return {
        status: 200,
        body: {
          logs: entries.map((e) => ({ timestamp: e.timestamp, line: legacyLine(e) })),
          logEntries: entries,
        },
      };
    },
    getSandboxLogs: async (r) => {
      const row = await ownedSandbox(o.store, r);
      const direction = r.params.direction ?? "forward";
      const cursor = clampTime(r.params.cursor);
      const entries = await read(row, {
        // forward reads from the cursor on, backward from the cursor back
        ...(direction === "forward" ? { from: cursor } : { to: cursor }),
        direction,
        limit: r.params.limit ?? 1000,
        minLevel: r.params.level,
        search: r.params.search,
      });
      return { status: 200, body: { logs: entries } };
    },
  };
}
