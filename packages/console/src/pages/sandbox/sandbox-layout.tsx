import { Link, Outlet, useOutletContext, useParams } from "react-router-dom";
import { ApiError } from "../../api/errors.js";
import { type SandboxDetail, useSandbox } from "../../api/sandboxes.js";
import { Tabs } from "../../components/layout.js";
import { ErrorNotice, Loading, StateBadge } from "../../components/status.js";
import { SandboxActions } from "./sandbox-actions.js";

export function useSandboxContext(): SandboxDetail {
  return useOutletContext<SandboxDetail>();
}

/** One sandbox: its header, actions and tabs; each tab is a route below. */
export function SandboxLayout() {
  const id = useParams().sandboxID!;
  const sandbox = useSandbox(id);
  const base = `/sandboxes/${encodeURIComponent(id)}`;
  const data = sandbox.data;

  return (
    <div className="page">
      <div className="breadcrumbs">
        <Link to="/sandboxes">Sandboxes</Link> / <span className="mono">{id}</span>
      </div>
      <header className="page-header">
        <h1 className="mono">{id}</h1>
        {data && <StateBadge state={data.state} detail={data.pauseKind} title={data.reason} />}
        {data && <span className="muted">{data.alias ?? data.templateID}</span>}
        <span className="spacer" />
        {data && <SandboxActions sandbox={data} />}
      </header>
      {sandbox.error instanceof ApiError && sandbox.error.status === 404 ? (
        <div className="notice warn" role="alert">
          <div className="title">This sandbox is gone</div>
          <div>{sandbox.error.message}. It was killed, or never belonged to this team.</div>
          <Link to="/sandboxes">Back to the list</Link>
        </div>
      ) : (
        <ErrorNotice error={sandbox.error} title="Could not read the sandbox" />
      )}
      {data?.reason && (
        <div className="notice warn" role="status">
          <span className="title">{data.state === "lost" ? "Node lost" : "Sandbox error"}</span> {data.reason}
        </div>
      )}
      {sandbox.isPending ? (
        <Loading label="Loading sandbox…" />
      ) : data ? (
        <>
          <Tabs
            label="Sandbox"
            tabs={[
              { to: base, label: "Overview", end: true, id: "overview" },
              { to: `${base}/terminal`, label: "Terminal", id: "terminal" },
              { to: `${base}/files`, label: "Files", id: "files" },
              { to: `${base}/logs`, label: "Logs", id: "logs" },
              { to: `${base}/events`, label: "Events", id: "events" },
              { to: `${base}/network`, label: "Network", id: "network" },
            ]}
          />
          <Outlet context={data} />
        </>
      ) : null}
    </div>
  );
}
