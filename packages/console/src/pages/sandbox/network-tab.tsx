import { useMemo, useRef, useState } from "react";
import { useNetworkDecisions } from "../../api/sandbox-logs.js";
import { formatClock, formatTime } from "../../components/format.js";
import { useSlashFocus } from "../../components/shortcuts.js";
import { Empty, ErrorNotice, Loading, StateBadge } from "../../components/status.js";
import { useSandboxContext } from "./sandbox-layout.js";

/** The egress decision log: every connection and lookup the policy judged, followed live. */
export function NetworkTab() {
  const sandbox = useSandboxContext();
  const decisions = useNetworkDecisions(sandbox.sandboxID);
  const [verdict, setVerdict] = useState<"" | "allowed" | "denied">("");
  const [text, setText] = useState("");
  const ref = useRef<HTMLInputElement>(null);
  useSlashFocus(ref);
  const shown = useMemo(() => {
    const needle = text.trim().toLowerCase();
    return decisions.items
      .filter((d) => !verdict || d.verdict === verdict)
      .filter(
        (d) =>
          !needle ||
          [d.destination, d.name, d.rule, d.protocol, String(d.port ?? "")].some((v) =>
            v?.toLowerCase().includes(needle),
          ),
      )
      .slice()
      .reverse();
  }, [decisions.items, verdict, text]);

  return (
    <section className="page" style={{ padding: 0 }} aria-label="Egress decisions">
      <div className="filter-bar">
        <label className="field grow">
          <span>
            Filter <span className="kbd">/</span>
          </span>
          <input
            ref={ref}
            type="search"
            value={text}
            onChange={(e) => setText(e.target.value)}
            placeholder="address, name, rule"
          />
        </label>
        <label className="field">
          <span>Verdict</span>
          <select value={verdict} onChange={(e) => setVerdict(e.target.value as typeof verdict)}>
            <option value="">any</option>
            <option value="allowed">allowed</option>
            <option value="denied">denied</option>
          </select>
        </label>
        <span className="muted">{decisions.items.length} decisions · following</span>
      </div>
      {decisions.error && <ErrorNotice error={new Error(decisions.error)} title="Could not read decisions" />}
      {decisions.loading ? (
        <Loading label="Loading decisions…" />
      ) : shown.length === 0 ? (
        <div className="panel">
          <Empty title="No egress decisions">
            {decisions.items.length > 0
              ? "None matches the filter."
              : "Connections and DNS lookups the sandbox makes are logged here."}
          </Empty>
        </div>
      ) : (
        <div className="table-wrap" style={{ maxHeight: "65vh" }}>
          <table aria-label="Egress decisions, newest first" data-testid="network-decisions">
            <thead>
              <tr>
                <th>Time</th>
                <th>Verdict</th>
                <th>Protocol</th>
                <th>Destination</th>
                <th>Name</th>
                <th className="num">Port</th>
                <th>Rule</th>
              </tr>
            </thead>
            <tbody>
              {shown.map((d) => (
                <tr key={d.seq}>
                  <td className="mono" title={formatTime(d.time)}>
                    {formatClock(d.time)}
                  </td>
                  <td>
                    <StateBadge state={d.verdict} />
                  </td>
                  <td>{d.protocol}</td>
                  <td className="mono">{d.destination ?? "—"}</td>
                  <td className="mono">{d.name ?? "—"}</td>
                  <td className="num">{d.port ?? "—"}</td>
                  <td className="mono">{d.rule}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
