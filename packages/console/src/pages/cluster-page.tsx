import { type ClusterNode, MAX_SANDBOX_PAGES, useNodes, useSandboxesByNode } from "../api/cluster.js";
import { formatMiB, formatTime } from "../components/format.js";
import { Empty, ErrorNotice, Loading, StateBadge } from "../components/status.js";
import { RelativeTime } from "../components/time.js";

function Meter({ used, total, label }: { used: number; total: number; label: string }) {
  return <meter className="meter" min={0} max={Math.max(total, 1)} value={used} aria-label={label} />;
}

/** The cluster's nodes (`x node`): state, heartbeat and capacity, with this team's sandboxes on each. */
export function ClusterPage() {
  const nodes = useNodes();
  const sandboxes = useSandboxesByNode();
  const list = nodes.data ?? [];
  const ready = list.filter((n) => n.state === "ready");
  const total = (pick: (n: ClusterNode) => number) => ready.reduce((sum, n) => sum + pick(n), 0);

  return (
    <div className="page">
      <header className="page-header">
        <h1>Cluster</h1>
        {nodes.isFetching && <span className="spinner" aria-hidden="true" />}
      </header>
      <ErrorNotice error={nodes.error} title="Could not list the nodes" />
      <ErrorNotice error={sandboxes.error} title="Could not count the team's sandboxes" />
      {sandboxes.data?.truncated && (
        <div className="notice warn">
          Only the team's first {MAX_SANDBOX_PAGES * 100} sandboxes are counted.
        </div>
      )}
      {list.length > 0 && (
        <div className="cards">
          <div className="card">
            <div className="label">Nodes ready</div>
            <div className="value">
              {ready.length} <span className="faint">/ {list.length}</span>
            </div>
            <div className="sub">
              {list.filter((n) => n.state === "draining").length} draining ·{" "}
              {list.filter((n) => n.state === "down").length} down
            </div>
          </div>
          <div className="card">
            <div className="label">Sandboxes on ready nodes</div>
            <div className="value">
              {total((n) => n.capacity.sandboxes)}{" "}
              <span className="faint">/ {total((n) => n.capacity.maxSandboxes)}</span>
            </div>
            <div className="sub">{total((n) => n.capacity.warmPoolMembers)} warm pool members</div>
          </div>
          <div className="card">
            <div className="label">Memory free</div>
            <div className="value">{formatMiB(total((n) => n.capacity.memoryFreeMB))}</div>
            <div className="sub">of {formatMiB(total((n) => n.capacity.memoryTotalMB))}</div>
          </div>
          <div className="card">
            <div className="label">CPUs</div>
            <div className="value">{total((n) => n.capacity.cpus)}</div>
            <div className="sub">on ready nodes</div>
          </div>
        </div>
      )}
      {nodes.isPending ? (
        <Loading label="Loading nodes…" />
      ) : list.length === 0 && !nodes.error ? (
        <div className="panel">
          <Empty title="No nodes">
            The platform runs on one host (<code>x serve</code>); nodes are listed when it runs as a cluster.
          </Empty>
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Nodes" data-testid="cluster-nodes">
            <thead>
              <tr>
                <th>Node</th>
                <th>State</th>
                <th>Heartbeat</th>
                <th className="num">Sandboxes</th>
                <th className="num">Memory free</th>
                <th className="num">CPUs · load</th>
                <th>Runtimes</th>
                <th className="num">Warm pool</th>
                <th className="num">This team's</th>
                <th>Up since</th>
              </tr>
            </thead>
            <tbody>
              {list.map((n) => {
                const c = n.capacity;
                const mine = sandboxes.data?.byNode.get(n.nodeID);
                return (
                  <tr key={n.nodeID} data-testid={`node-row-${n.nodeID}`}>
                    <td className="mono">{n.nodeID}</td>
                    <td>
                      <StateBadge
                        state={n.state}
                        title={n.downAt ? `down since ${formatTime(n.downAt)}` : undefined}
                      />
                      {n.state === "down" && n.downAt && (
                        <div className="faint">
                          since <RelativeTime iso={n.downAt} />
                        </div>
                      )}
                    </td>
                    <td title={formatTime(n.heartbeatAt)}>
                      <RelativeTime iso={n.heartbeatAt} />
                    </td>
                    <td className="num">
                      <div className="row" style={{ justifyContent: "flex-end", flexWrap: "nowrap" }}>
                        <Meter used={c.sandboxes} total={c.maxSandboxes} label={`Sandboxes on ${n.nodeID}`} />
                        {c.sandboxes} / {c.maxSandboxes}
                      </div>
                    </td>
                    <td className="num">
                      <div className="row" style={{ justifyContent: "flex-end", flexWrap: "nowrap" }}>
                        <Meter
                          used={c.memoryTotalMB - c.memoryFreeMB}
                          total={c.memoryTotalMB}
                          label={`Memory used on ${n.nodeID}`}
                        />
                        {formatMiB(c.memoryFreeMB)} / {formatMiB(c.memoryTotalMB)}
                      </div>
                    </td>
                    <td className="num">
                      {c.cpus} · {c.load.toFixed(2)}
                    </td>
                    <td>
                      {c.runtimes.map((r) => (
                        <span key={r} className="tag">
                          {r}
                        </span>
                      ))}
                    </td>
                    <td className="num">{c.warmPoolMembers}</td>
                    <td className="num" title="running · paused · other states">
                      {mine ? `${mine.running} · ${mine.paused}${mine.other ? ` · ${mine.other}` : ""}` : "—"}
                    </td>
                    <td title={formatTime(n.startedAt)}>
                      <RelativeTime iso={n.startedAt} />
                    </td>
                  </tr>
                );
              })}
            </tbody>
          </table>
        </div>
      )}
    </div>
  );
}
