import { useEffect, useMemo, useRef, useState } from "react";
import { Link } from "react-router-dom";
import {
  type ListedSandbox,
  runtimeLabel,
  type SandboxListFilters,
  type SandboxMetric,
  type SandboxState,
  useLatestMetrics,
  useSandboxList,
} from "../../api/sandboxes.js";
import { formatBytes, formatDuration, formatPercent } from "../../components/format.js";
import { Pager, usePager } from "../../components/pager.js";
import { useSlashFocus } from "../../components/shortcuts.js";
import { Empty, ErrorNotice, Loading, StateBadge } from "../../components/status.js";
import { useDebounced } from "../../components/use-debounced.js";
import { useNow } from "../../components/use-now.js";
import { CreateSandboxDialog } from "./create-sandbox-dialog.js";

const STATE_FILTERS: { value: string; label: string; states: SandboxState[] }[] = [
  { value: "", label: "All states", states: [] },
  { value: "running", label: "Running", states: ["running"] },
  { value: "paused", label: "Paused", states: ["paused"] },
  { value: "running,paused", label: "Running or paused", states: ["running", "paused"] },
  { value: "error", label: "Error", states: ["error"] },
  { value: "lost", label: "Lost", states: ["lost"] },
];

function MetricCells({ sandbox, metric }: { sandbox: ListedSandbox; metric?: SandboxMetric }) {
  if (sandbox.state !== "running" || !metric)
    return (
      <>
        <td className="num faint">{sandbox.cpuCount} vCPU</td>
        <td className="num faint">{formatBytes(sandbox.memoryMB * 1024 * 1024)}</td>
      </>
    );
  return (
    <>
      <td className="num" title={`${metric.cpuCount} vCPU`}>
        {formatPercent(metric.cpuUsedPct)} <span className="faint">of {metric.cpuCount}</span>
      </td>
      <td className="num" title={`cache ${formatBytes(metric.memCache)}`}>
        {formatBytes(metric.memUsed)} <span className="faint">/ {formatBytes(metric.memTotal)}</span>
      </td>
    </>
  );
}

function SandboxRow({
  sandbox,
  metric,
  now,
}: {
  sandbox: ListedSandbox;
  metric?: SandboxMetric;
  now: number;
}) {
  const started = Date.parse(sandbox.startedAt);
  const ends = Date.parse(sandbox.endAt);
  const meta = Object.entries(sandbox.metadata ?? {});
  return (
    <tr data-testid={`sandbox-row-${sandbox.sandboxID}`}>
      <td>
        <Link to={`/sandboxes/${encodeURIComponent(sandbox.sandboxID)}`} className="mono">
          {sandbox.sandboxID}
        </Link>
      </td>
      <td>
        <StateBadge state={sandbox.state} detail={sandbox.pauseKind} title={sandbox.reason} />
      </td>
      <td className="ellipsis" style={{ maxWidth: 220 }} title={sandbox.templateID}>
        {sandbox.alias ?? <span className="mono">{sandbox.templateID}</span>}
      </td>
      <td className="mono">{sandbox.clientID}</td>
      <td title={sandbox.runtime} data-testid={`sandbox-runtime-${sandbox.sandboxID}`}>
        {runtimeLabel(sandbox.runtime)}
      </td>
      <MetricCells sandbox={sandbox} metric={metric} />
      <td className="num" title={sandbox.startedAt}>
        {formatDuration((now - started) / 1000)}
      </td>
      <td className="num" title={sandbox.endAt}>
        {sandbox.state === "running" ? (ends > now ? formatDuration((ends - now) / 1000) : "due") : "—"}
      </td>
      <td className="wrap" style={{ minWidth: 120 }}>
        {meta.length === 0 ? (
          <span className="faint">—</span>
        ) : (
          meta.map(([k, v]) => (
            <span key={k} className="tag">
              {k}={v}
            </span>
          ))
        )}
      </td>
    </tr>
  );
}

/** The team's sandboxes, live: polled every 2 s with their latest CPU and memory. */
export function SandboxesPage() {
  const [state, setState] = useState("");
  const [template, setTemplate] = useState("");
  const [metadata, setMetadata] = useState("");
  const [limit, setLimit] = useState(50);
  const [creating, setCreating] = useState(false);
  const filterRef = useRef<HTMLInputElement>(null);
  useSlashFocus(filterRef);
  const pager = usePager();
  const now = useNow();

  const debouncedTemplate = useDebounced(template);
  const debouncedMetadata = useDebounced(metadata);
  const filters = useMemo<SandboxListFilters>(
    () => ({
      states: STATE_FILTERS.find((f) => f.value === state)?.states ?? [],
      template: debouncedTemplate,
      metadata: debouncedMetadata,
      limit,
    }),
    [state, debouncedTemplate, debouncedMetadata, limit],
  );
  const { reset } = pager;
  // biome-ignore lint/correctness/useExhaustiveDependencies: a new filter starts from the first page
  useEffect(() => reset(), [filters, reset]);

  const list = useSandboxList(filters, pager.current);
  const sandboxes = list.data?.items ?? [];
  const runningIds = useMemo(
    () =>
      sandboxes
        .filter((s) => s.state === "running")
        .map((s) => s.sandboxID)
        .sort(),
    [sandboxes],
  );
  const metrics = useLatestMetrics(runningIds);
  const filtered = state !== "" || template !== "" || metadata !== "";

  return (
    <div className="page">
      <header className="page-header">
        <h1>Sandboxes</h1>
        {list.data && Number.isFinite(list.data.totalRunning) && (
          <span className="muted" data-testid="total-running">
            {list.data.totalRunning} running
          </span>
        )}
        {list.isFetching && <span className="spinner" aria-hidden="true" />}
        <span className="spacer" />
        <button
          type="button"
          className="primary"
          onClick={() => setCreating(true)}
          data-testid="create-sandbox"
        >
          New sandbox
        </button>
      </header>

      <section className="filter-bar" aria-label="Filter sandboxes">
        <label className="field">
          <span>
            Template{" "}
            <span className="kbd" title="Press / to focus">
              /
            </span>
          </span>
          <input
            ref={filterRef}
            type="search"
            value={template}
            onChange={(e) => setTemplate(e.target.value)}
            placeholder="name or ID"
            data-testid="filter-template"
          />
        </label>
        <label className="field grow">
          <span>Metadata</span>
          <input
            type="search"
            value={metadata}
            onChange={(e) => setMetadata(e.target.value)}
            placeholder="key=value, all must match"
            data-testid="filter-metadata"
          />
        </label>
        <label className="field">
          <span>State</span>
          <select value={state} onChange={(e) => setState(e.target.value)} data-testid="filter-state">
            {STATE_FILTERS.map((f) => (
              <option key={f.value} value={f.value}>
                {f.label}
              </option>
            ))}
          </select>
        </label>
        <label className="field">
          <span>Per page</span>
          <select value={limit} onChange={(e) => setLimit(Number(e.target.value))}>
            {[25, 50, 100].map((n) => (
              <option key={n} value={n}>
                {n}
              </option>
            ))}
          </select>
        </label>
      </section>

      <ErrorNotice error={list.error} title="Could not list sandboxes" />
      {metrics.error && <ErrorNotice error={metrics.error} title="Could not read metrics" />}

      {list.isPending ? (
        <Loading label="Loading sandboxes…" />
      ) : sandboxes.length === 0 && !list.error ? (
        <div className="panel">
          <Empty title={filtered ? "No sandbox matches these filters" : "No sandboxes yet"}>
            {filtered ? (
              "Change or clear the filters above."
            ) : (
              <button type="button" className="primary" onClick={() => setCreating(true)}>
                Create one
              </button>
            )}
          </Empty>
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Sandboxes" data-testid="sandbox-table">
            <thead>
              <tr>
                <th>ID</th>
                <th>State</th>
                <th>Template</th>
                <th>Node</th>
                <th>Runtime</th>
                <th className="num">CPU</th>
                <th className="num">Memory</th>
                <th className="num">Age</th>
                <th className="num">Expires in</th>
                <th>Metadata</th>
              </tr>
            </thead>
            <tbody>
              {sandboxes.map((s) => (
                <SandboxRow key={s.sandboxID} sandbox={s} metric={metrics.data?.[s.sandboxID]} now={now} />
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextToken={list.data?.nextToken} count={sandboxes.length} label="sandboxes" />
      <CreateSandboxDialog open={creating} onClose={() => setCreating(false)} />
    </div>
  );
}
