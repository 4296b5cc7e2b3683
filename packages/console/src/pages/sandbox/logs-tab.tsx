import { useRef, useState } from "react";
import { type LogLevel, useSandboxLogs } from "../../api/sandbox-logs.js";
import { formatClock, formatTime } from "../../components/format.js";
import { LogView } from "../../components/log-view.js";
import { useSlashFocus } from "../../components/shortcuts.js";
import { Empty, ErrorNotice, Loading } from "../../components/status.js";
import { useDebounced } from "../../components/use-debounced.js";
import { useSandboxContext } from "./sandbox-layout.js";

/** The sandbox's log (its agent, runtime and lifecycle), followed live. */
export function LogsTab() {
  const sandbox = useSandboxContext();
  const [level, setLevel] = useState<LogLevel | "">("");
  const [search, setSearch] = useState("");
  const searchRef = useRef<HTMLInputElement>(null);
  useSlashFocus(searchRef);
  const debounced = useDebounced(search);
  const logs = useSandboxLogs(sandbox.sandboxID, level, debounced);

  return (
    <section className="page" style={{ padding: 0 }} aria-label="Logs">
      <div className="filter-bar">
        <label className="field grow">
          <span>
            Contains <span className="kbd">/</span>
          </span>
          <input
            ref={searchRef}
            type="search"
            value={search}
            onChange={(e) => setSearch(e.target.value)}
            placeholder="text (case-sensitive)"
          />
        </label>
        <label className="field">
          <span>Level at least</span>
          <select value={level} onChange={(e) => setLevel(e.target.value as LogLevel | "")}>
            <option value="">any</option>
            <option value="debug">debug</option>
            <option value="info">info</option>
            <option value="warn">warn</option>
            <option value="error">error</option>
          </select>
        </label>
        <span className="muted" aria-live="polite">
          {logs.items.length} entries · following
        </span>
      </div>
      {logs.error && <ErrorNotice error={new Error(logs.error)} title="Could not read the logs" />}
      {logs.loading ? (
        <Loading label="Loading logs…" />
      ) : logs.items.length === 0 ? (
        <div className="panel">
          <Empty title="No log entries">
            {search || level ? "Nothing matches the filter yet." : "Nothing logged yet."}
          </Empty>
        </div>
      ) : (
        <LogView count={logs.items.length} label="Sandbox log" testId="sandbox-log">
          {logs.items.map((e, i) => {
            const fields = Object.entries(e.fields)
              .map(([k, v]) => `${k}=${v}`)
              .join(" ");
            return (
              // entries have no ID; their place in the followed log is stable
              // biome-ignore lint/suspicious/noArrayIndexKey: append-only list
              <div key={i} className={`log-line level-${e.level}`}>
                <span className="ts" title={formatTime(e.timestamp)}>
                  {formatClock(e.timestamp)}
                </span>
                <span className="lvl">{e.level}</span>
                <span className="msg">
                  {e.message} {fields && <span className="fields">{fields}</span>}
                </span>
              </div>
            );
          })}
        </LogView>
      )}
    </section>
  );
}
