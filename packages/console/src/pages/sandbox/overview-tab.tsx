import { useMemo, useState } from "react";
import { runtimeLabel, type SandboxMetric, useSandboxMetrics } from "../../api/sandboxes.js";
import { TimeChart } from "../../components/chart.js";
import { formatBytes, formatMiB, formatPercent, formatTime } from "../../components/format.js";
import { Empty, ErrorNotice, Loading } from "../../components/status.js";
import { RelativeTime } from "../../components/time.js";
import { useSandboxContext } from "./sandbox-layout.js";

const RANGES = [
  { label: "5m", seconds: 300 },
  { label: "15m", seconds: 900 },
  { label: "1h", seconds: 3600 },
  { label: "6h", seconds: 21600 },
];

function series(samples: SandboxMetric[]) {
  return {
    timestamps: samples.map((s) => s.timestampUnix),
    cpu: samples.map((s) => s.cpuUsedPct),
    memUsed: samples.map((s) => s.memUsed),
    memCache: samples.map((s) => s.memCache),
    memTotal: samples.map((s) => s.memTotal),
    diskUsed: samples.map((s) => s.diskUsed),
    diskTotal: samples.map((s) => s.diskTotal),
  };
}

function Metrics({ id, live }: { id: string; live: boolean }) {
  const [range, setRange] = useState(900);
  const metrics = useSandboxMetrics(id, range, true);
  const samples = metrics.data ?? [];
  const s = useMemo(() => series(samples), [samples]);
  const last = samples.at(-1);
  return (
    <section aria-labelledby="metrics-title" className="page" style={{ padding: 0 }}>
      <div className="row">
        <h2 id="metrics-title">Metrics</h2>
        <span className="grow" />
        <fieldset className="segmented">
          <legend className="visually-hidden">Time range</legend>
          {RANGES.map((r) => (
            <button
              key={r.seconds}
              type="button"
              aria-pressed={range === r.seconds}
              onClick={() => setRange(r.seconds)}
            >
              {r.label}
            </button>
          ))}
        </fieldset>
      </div>
      <ErrorNotice error={metrics.error} title="Could not read metrics" />
      {last && (
        <div className="cards">
          <div className="card">
            <div className="label">CPU</div>
            <div className="value">{formatPercent(last.cpuUsedPct)}</div>
            <div className="sub">of {last.cpuCount} vCPU</div>
          </div>
          <div className="card">
            <div className="label">Memory</div>
            <div className="value">{formatBytes(last.memUsed)}</div>
            <div className="sub">
              of {formatBytes(last.memTotal)} · cache {formatBytes(last.memCache)}
            </div>
          </div>
          <div className="card">
            <div className="label">Disk</div>
            <div className="value">{formatBytes(last.diskUsed)}</div>
            <div className="sub">of {formatBytes(last.diskTotal)}</div>
          </div>
        </div>
      )}
      {metrics.isPending ? (
        <Loading label="Loading metrics…" />
      ) : samples.length === 0 ? (
        <div className="panel">
          <Empty title="No samples in this range">
            {live
              ? "Samples appear every few seconds while the sandbox runs."
              : "The sandbox is not running."}
          </Empty>
        </div>
      ) : (
        <div className="charts">
          <TimeChart
            title="CPU"
            timestamps={s.timestamps}
            series={[{ label: "CPU used", values: s.cpu, color: "--chart-1", fill: true }]}
            formatValue={(v) => `${v.toFixed(0)}%`}
            yRange={[0, 100]}
            testId="chart-cpu"
          />
          <TimeChart
            title="Memory"
            timestamps={s.timestamps}
            series={[
              { label: "Used", values: s.memUsed, color: "--chart-1", fill: true },
              { label: "Cache", values: s.memCache, color: "--chart-3" },
              { label: "Total", values: s.memTotal, color: "--chart-2" },
            ]}
            formatValue={formatBytes}
            testId="chart-memory"
          />
          <TimeChart
            title="Disk"
            timestamps={s.timestamps}
            series={[
              { label: "Used", values: s.diskUsed, color: "--chart-1", fill: true },
              { label: "Total", values: s.diskTotal, color: "--chart-2" },
            ]}
            formatValue={formatBytes}
            testId="chart-disk"
          />
        </div>
      )}
    </section>
  );
}

/** What the sandbox is and how it is doing. */
export function OverviewTab() {
  const sandbox = useSandboxContext();
  const meta = Object.entries(sandbox.metadata ?? {});
  const network = sandbox.network;
  return (
    <>
      <div className="panel">
        <div className="panel-body">
          <dl className="props">
            <dt>Template</dt>
            <dd>
              {sandbox.alias ? `${sandbox.alias} ` : ""}
              <span className="mono faint">{sandbox.templateID}</span>
            </dd>
            <dt>Node</dt>
            <dd className="mono">{sandbox.clientID}</dd>
            <dt>Runtime</dt>
            <dd title={sandbox.runtime} data-testid="sandbox-runtime">
              {runtimeLabel(sandbox.runtime)}
            </dd>
            <dt>Started</dt>
            <dd>
              {formatTime(sandbox.startedAt)} (<RelativeTime iso={sandbox.startedAt} />)
            </dd>
            <dt>Expires</dt>
            <dd>
              {formatTime(sandbox.endAt)} (<RelativeTime iso={sandbox.endAt} />)
              {sandbox.lifecycle && `, then ${sandbox.lifecycle.onTimeout === "pause" ? "paused" : "killed"}`}
            </dd>
            <dt>Resources</dt>
            <dd>
              {sandbox.cpuCount} vCPU · {formatMiB(sandbox.memoryMB)} memory · {formatMiB(sandbox.diskSizeMB)}{" "}
              disk
            </dd>
            <dt>envd</dt>
            <dd>{sandbox.envdVersion}</dd>
            {sandbox.lifecycle && (
              <>
                <dt>Auto-resume</dt>
                <dd>{sandbox.lifecycle.autoResume ? "on traffic" : "off"}</dd>
              </>
            )}
            <dt>Internet</dt>
            <dd>
              {sandbox.allowInternetAccess === false ? "off" : "on"}
              {network?.allowOut?.length ? ` · allow ${network.allowOut.join(", ")}` : ""}
              {network?.denyOut?.length ? ` · deny ${network.denyOut.join(", ")}` : ""}
              {network?.allowPublicTraffic === false ? " · private (traffic token needed)" : ""}
            </dd>
            {sandbox.volumeMounts && sandbox.volumeMounts.length > 0 && (
              <>
                <dt>Volumes</dt>
                <dd>
                  {sandbox.volumeMounts.map((v) => (
                    <span key={v.path} className="tag">
                      {v.name}:{v.path}
                    </span>
                  ))}
                </dd>
              </>
            )}
            <dt>Metadata</dt>
            <dd>
              {meta.length === 0 ? (
                <span className="faint">none</span>
              ) : (
                meta.map(([k, v]) => (
                  <span key={k} className="tag">
                    {k}={v}
                  </span>
                ))
              )}
            </dd>
          </dl>
        </div>
      </div>
      <Metrics id={sandbox.sandboxID} live={sandbox.state === "running"} />
    </>
  );
}
