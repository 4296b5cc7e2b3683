import { useState } from "react";
import { useNavigate } from "react-router-dom";
import { useCreateSandbox } from "../api/sandboxes.js";
import { type Snapshot, useDeleteTemplate, useSnapshots } from "../api/templates.js";
import { CopyButton } from "../components/copy-button.js";
import { ConfirmDialog } from "../components/dialog.js";
import { Pager, usePager } from "../components/pager.js";
import { Badge, Empty, ErrorNotice, Loading } from "../components/status.js";

/** The team's snapshots: start sandboxes from them, or delete them. */
export function SnapshotsPage() {
  const pager = usePager();
  const snapshots = useSnapshots(pager.current);
  const remove = useDeleteTemplate();
  const create = useCreateSandbox();
  const navigate = useNavigate();
  const [deleting, setDeleting] = useState<Snapshot>();
  const [starting, setStarting] = useState<string>();
  const items = snapshots.data?.items ?? [];

  const start = (snapshotID: string) => {
    setStarting(snapshotID);
    create.mutate(
      { templateID: snapshotID, timeout: 300 },
      {
        onSuccess: (s) => navigate(`/sandboxes/${encodeURIComponent(s.sandboxID)}`),
        onSettled: () => setStarting(undefined),
      },
    );
  };

  return (
    <div className="page">
      <header className="page-header">
        <h1>Snapshots</h1>
      </header>
      <p className="muted" style={{ margin: 0 }}>
        A snapshot is taken from a sandbox (its Snapshot action). Sandboxes started from a memory snapshot
        continue its processes; from a files snapshot they boot afresh.
      </p>
      <ErrorNotice error={snapshots.error} title="Could not list snapshots" />
      <ErrorNotice error={create.error} title="Could not start a sandbox" />
      {snapshots.isPending ? (
        <Loading label="Loading snapshots…" />
      ) : items.length === 0 ? (
        <div className="panel">
          <Empty title="No snapshots">Take one from a running sandbox's page.</Empty>
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Snapshots" data-testid="snapshot-table">
            <thead>
              <tr>
                <th>Snapshot ID</th>
                <th>Kind</th>
                <th>Names</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {items.map((s) => (
                <tr key={s.snapshotID} data-testid={`snapshot-row-${s.snapshotID}`}>
                  <td className="mono">{s.snapshotID}</td>
                  <td>
                    {s.kind ? (
                      <Badge tone={s.kind === "memory" ? "info" : ""}>{s.kind}</Badge>
                    ) : (
                      <span className="faint">—</span>
                    )}
                  </td>
                  <td className="wrap">
                    {s.names.map((n) => (
                      <span key={n} className="tag">
                        {n}
                      </span>
                    ))}
                  </td>
                  <td className="actions">
                    <div className="row">
                      <CopyButton text={s.snapshotID} label="Copy ID" />
                      <button
                        type="button"
                        className="small primary"
                        onClick={() => start(s.snapshotID)}
                        disabled={starting !== undefined}
                      >
                        {starting === s.snapshotID ? "Starting…" : "Start sandbox"}
                      </button>
                      <button
                        type="button"
                        className="small danger"
                        onClick={() => {
                          remove.reset();
                          setDeleting(s);
                        }}
                        aria-label={`Delete snapshot ${s.snapshotID}`}
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <Pager pager={pager} nextToken={snapshots.data?.nextToken} count={items.length} label="snapshots" />
      <ConfirmDialog
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        title={`Delete snapshot ${deleting?.snapshotID ?? ""}?`}
        message="Sandboxes can no longer be started from it. Refused while sandboxes started from it run or are paused."
        confirmLabel="Delete snapshot"
        onConfirm={() =>
          deleting && remove.mutate(deleting.snapshotID, { onSuccess: () => setDeleting(undefined) })
        }
        pending={remove.isPending}
        error={remove.error}
        testId="delete-snapshot-dialog"
      />
    </div>
  );
}
