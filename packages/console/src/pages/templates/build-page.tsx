import { Link, useParams } from "react-router-dom";
import { useBuildProgress } from "../../api/templates.js";
import { formatClock, formatTime } from "../../components/format.js";
import { LogView } from "../../components/log-view.js";
import { ErrorNotice, Loading, StateBadge } from "../../components/status.js";

/** One build: its status, progress and log, followed while it runs. */
export function BuildPage() {
  const { templateID, buildID } = useParams() as { templateID: string; buildID: string };
  const build = useBuildProgress(templateID, buildID);
  const running = build.status === "building" || build.status === "waiting";
  const percent =
    build.step && build.step.total > 0
      ? (Math.min(build.step.current, build.step.total) / build.step.total) * 100
      : undefined;

  return (
    <div className="page">
      <div className="breadcrumbs">
        <Link to="/templates">Templates</Link> /{" "}
        <Link to={`/templates/${encodeURIComponent(templateID)}`}>{templateID}</Link> / build
      </div>
      <header className="page-header">
        <h1>
          Build <span className="mono">{buildID}</span>
        </h1>
        {build.status && <StateBadge state={build.status} />}
      </header>
      {build.error && <ErrorNotice error={new Error(build.error)} title="Could not read the build" />}
      {build.status === undefined && !build.error && <Loading label="Loading build…" />}
      {build.status && (
        <div className="panel">
          <div className="panel-body" style={{ display: "flex", flexDirection: "column", gap: 6 }}>
            <div className="row">
              <span data-testid="build-progress-label">
                {build.status === "waiting" && "Waiting for its files and start"}
                {build.status === "building" &&
                  (build.step ? `Step ${build.step.current} of ${build.step.total}` : "Building the base")}
                {build.status === "ready" && "Finished"}
                {build.status === "error" &&
                  `Failed${build.reason?.step ? ` at step ${build.reason.step}` : ""}`}
              </span>
              <span className="grow" />
              <span className="muted">{build.logs.length} log entries</span>
            </div>
            <div
              className={`progress${running && percent === undefined ? " indeterminate" : ""}`}
              role="progressbar"
              aria-label="Build progress"
              aria-valuemin={0}
              aria-valuemax={100}
              aria-valuenow={build.status === "ready" ? 100 : percent}
            >
              <div
                style={{
                  width:
                    build.status === "ready" ? "100%" : percent !== undefined ? `${percent}%` : undefined,
                }}
              />
            </div>
          </div>
        </div>
      )}
      {build.status === "error" && build.reason && (
        <div className="notice error" role="alert">
          <span className="title">Build failed</span>
          <div className="mono" style={{ whiteSpace: "pre-wrap" }}>
            {build.reason.message}
          </div>
        </div>
      )}
      <LogView count={build.logs.length} label="Build log" testId="build-log">
        {build.logs.length === 0 ? (
          <div className="log-line faint">
            {running ? "Waiting for the first log line…" : "No log entries."}
          </div>
        ) : (
          build.logs.map((e, i) => (
            // biome-ignore lint/suspicious/noArrayIndexKey: the log is read by offset, append-only
            <div key={i} className={`log-line level-${e.level}`}>
              <span className="ts" title={formatTime(e.timestamp)}>
                {formatClock(e.timestamp)}
              </span>
              <span className="lvl">{e.level}</span>
              <span className="msg">{e.message}</span>
            </div>
          ))
        )}
      </LogView>
    </div>
  );
}
