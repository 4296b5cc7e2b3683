import type { Schemas } from "@x/platform-client";
import { useMemo, useState } from "react";
import { useTeam, useTeamMetrics } from "../../api/team.js";
import { TimeChart } from "../../components/chart.js";
import { formatDuration, formatMiB, formatTime } from "../../components/format.js";
import { Empty, ErrorNotice, Loading } from "../../components/status.js";

const RANGES = [
  { label: "1h", seconds: 3600 },
  { label: "24h", seconds: 86400 },
  { label: "7d", seconds: 7 * 86400 },
];

function limit(value: number | null, format: (v: number) => string = String): string {
  return value === null ? "no limit" : format(value);
}

function Limits({ team }: { team: Schemas["TeamDetail"] }) {
  const eff = team.effectiveLimits;
  const own = team.limits;
  const rows: { label: string; key: keyof Schemas["TeamLimits"]; format?: (v: number) => string }[] = [
    { label: "Sandboxes at once", key: "sandboxes" },
    { label: "vCPUs per sandbox", key: "cpuCount" },
    { label: "Memory per sandbox", key: "memoryMB", format: formatMiB },
    { label: "Disk per sandbox", key: "diskSizeMB", format: formatMiB },
    { label: "Longest timeout", key: "timeoutSeconds", format: formatDuration },
    { label: "Volumes", key: "volumes" },
    { label: "Size of one volume", key: "volumeSizeMB", format: formatMiB },
    { label: "Templates (snapshots' included)", key: "templates" },
    { label: "Snapshots", key: "snapshots" },
    { label: "Sandboxes per fork", key: "forkCount" },
    { label: "Build archives kept", key: "uploads" },
    { label: "Size of build archives kept", key: "uploadsMB", format: formatMiB },
  ];
  return (
    <div className="table-wrap">
      <table aria-label="Limits">
        <thead>
          <tr>
            <th>Limit</th>
            <th>In force</th>
            <th>Source</th>
          </tr>
        </thead>
        <tbody>
          {rows.map((r) => (
            <tr key={r.key}>
              <td>{r.label}</td>
              <td>{limit(eff[r.key], r.format)}</td>
              <td className="muted">
                {own[r.key] !== null ? "this team" : eff[r.key] !== null ? "platform" : "—"}
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function UsageCharts() {
  const [range, setRange] = useState(86400);
  const metrics = useTeamMetrics(range);
  const points = metrics.data?.points ?? [];
  const data = useMemo(
    () => ({
      t: points.map((p) => p.timestampUnix),
      concurrent: points.map((p) => p.concurrentSandboxes),
      rate: points.map((p) => p.sandboxStartRate),
    }),
    [points],
  );
  return (
    <section className="page" style={{ padding: 0 }} aria-labelledby="usage-title">
      <div className="row">
        <h2 id="usage-title">Usage over time</h2>
        <span className="grow" />
        {metrics.isFetching && <span className="spinner" aria-hidden="true" />}
        <fieldset className="segmented">
          <legend className="visually-hidden">Time range</legend>
          {RANGES.map((r) => (
            <button
              key={r.seconds}
              type="button"
              aria-pressed={range === r.seconds}
              onClick={() => setRange(r.seconds)}
              data-testid={`range-${r.label}`}
            >
              {r.label}
            </button>
          ))}
        </fieldset>
      </div>
      <ErrorNotice error={metrics.error} title="Could not read the team's metrics" />
      {metrics.data && (
        <div className="cards">
          <div className="card">
            <div className="label">Peak concurrent</div>
            <div className="value">{metrics.data.maxConcurrent.value}</div>
            <div className="sub">at {formatTime(metrics.data.maxConcurrent.timestampUnix * 1000)}</div>
          </div>
          <div className="card">
            <div className="label">Peak start rate</div>
            <div className="value">{metrics.data.maxRate.value.toFixed(2)}/s</div>
            <div className="sub">at {formatTime(metrics.data.maxRate.timestampUnix * 1000)}</div>
          </div>
        </div>
      )}
      {metrics.isPending ? (
        <Loading label="Loading metrics…" />
      ) : points.length === 0 ? (
        <div className="panel">
          <Empty title="No data in this range" />
        </div>
      ) : (
        <div className="charts">
          <TimeChart
            title="Concurrent sandboxes"
            timestamps={data.t}
            series={[{ label: "Running", values: data.concurrent, color: "--chart-1", fill: true }]}
            formatValue={(v) => v.toFixed(0)}
            testId="chart-concurrency"
          />
          <TimeChart
            title="Start rate"
            timestamps={data.t}
            series={[{ label: "Starts per second", values: data.rate, color: "--chart-2", fill: true }]}
            formatValue={(v) => `${v.toFixed(2)}/s`}
            testId="chart-start-rate"
          />
        </div>
      )}
    </section>
  );
}

/** The team's use of its limits, and its concurrency and start rate over time. */
export function UsageTab() {
  const team = useTeam();
  return (
    <>
      <ErrorNotice error={team.error} title="Could not read the team" />
      {team.isPending ? (
        <Loading />
      ) : team.data ? (
        <>
          <div className="cards" data-testid="team-usage">
            <div className="card">
              <div className="label">Live sandboxes</div>
              <div className="value">
                {team.data.usage.liveSandboxes}
                {team.data.effectiveLimits.sandboxes !== null && (
                  <span className="faint"> / {team.data.effectiveLimits.sandboxes}</span>
                )}
              </div>
              <div className="sub">
                {team.data.usage.runningSandboxes} running · {team.data.usage.pausedSandboxes} paused
              </div>
            </div>
            <div className="card">
              <div className="label">Sandbox time, 30 days</div>
              <div className="value">{formatDuration(team.data.usage.sandboxSecondsLast30Days)}</div>
              <div className="sub">{team.data.usage.sandboxSecondsLast30Days.toLocaleString()} s</div>
            </div>
            <div className="card">
              <div className="label">Template namespace</div>
              <div className="value mono" style={{ fontSize: 14 }}>
                {team.data.namespace}
              </div>
              <div className="sub">created {formatTime(team.data.createdAt)}</div>
            </div>
          </div>
          <h2>Limits</h2>
          <Limits team={team.data} />
        </>
      ) : null}
      <UsageCharts />
    </>
  );
}
