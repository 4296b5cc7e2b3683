import { useState } from "react";
import { Link, useNavigate } from "react-router-dom";
import { useCreateVolume, useDeleteVolume, useVolumes, type Volume } from "../../api/volumes.js";
import { ConfirmDialog, FormDialog } from "../../components/dialog.js";
import { formatMiB, formatTime } from "../../components/format.js";
import { Empty, ErrorNotice, Loading } from "../../components/status.js";

export const volumePath = (v: { volumeID: string }) => `/volumes/${encodeURIComponent(v.volumeID)}`;

/** The team's persistent volumes. */
export function VolumesPage() {
  const volumes = useVolumes();
  const create = useCreateVolume();
  const remove = useDeleteVolume();
  const navigate = useNavigate();
  const [creating, setCreating] = useState(false);
  const [name, setName] = useState("");
  const [size, setSize] = useState("");
  const [deleting, setDeleting] = useState<Volume>();
  const nameValid = /^[A-Za-z0-9_-]+$/.test(name);
  const sizeValid = size === "" || (Number.isInteger(Number(size)) && Number(size) >= 16);

  return (
    <div className="page">
      <header className="page-header">
        <h1>Volumes</h1>
        <span className="spacer" />
        <button
          type="button"
          className="primary"
          onClick={() => {
            create.reset();
            setName("");
            setSize("");
            setCreating(true);
          }}
          data-testid="create-volume"
        >
          New volume
        </button>
      </header>
      <p className="muted" style={{ margin: 0 }}>
        Persistent storage, mounted by name into sandboxes at create (<code>volumeMounts</code>); several
        sandboxes may share one.
      </p>
      <ErrorNotice error={volumes.error} title="Could not list volumes" />
      {volumes.isPending ? (
        <Loading label="Loading volumes…" />
      ) : volumes.data?.length === 0 ? (
        <div className="panel">
          <Empty title="No volumes yet" />
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Volumes" data-testid="volume-table">
            <thead>
              <tr>
                <th>Name</th>
                <th>ID</th>
                <th className="num">Size</th>
                <th>Created</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {volumes.data?.map((v) => (
                <tr key={v.volumeID} data-testid={`volume-row-${v.name}`}>
                  <td>
                    <Link to={volumePath(v)}>{v.name}</Link>
                  </td>
                  <td className="mono faint">{v.volumeID}</td>
                  <td className="num">{formatMiB(v.sizeMB)}</td>
                  <td>{formatTime(v.createdAt)}</td>
                  <td className="actions">
                    <button
                      type="button"
                      className="small danger"
                      onClick={() => {
                        remove.reset();
                        setDeleting(v);
                      }}
                      aria-label={`Delete volume ${v.name}`}
                    >
                      Delete
                    </button>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      <FormDialog
        open={creating}
        onClose={() => setCreating(false)}
        title="New volume"
        submitLabel="Create"
        onSubmit={() =>
          create.mutate(
            { name, ...(size ? { sizeMB: Number(size) } : {}) },
            { onSuccess: (v) => navigate(volumePath(v)) },
          )
        }
        pending={create.isPending}
        error={create.error}
        invalid={!nameValid || !sizeValid}
        testId="create-volume-dialog"
      >
        <label className="field">
          <span>Name</span>
          <input
            value={name}
            onChange={(e) => setName(e.target.value)}
            data-autofocus
            data-testid="volume-name"
          />
          <span className="hint">Letters, digits, _ and -; unique in the team.</span>
        </label>
        <label className="field">
          <span>Size (MiB)</span>
          <input
            type="number"
            min={16}
            value={size}
            onChange={(e) => setSize(e.target.value)}
            placeholder="platform default"
          />
        </label>
      </FormDialog>
      <ConfirmDialog
        open={deleting !== undefined}
        onClose={() => setDeleting(undefined)}
        title={`Delete volume ${deleting?.name ?? ""}?`}
        message="Its files are deleted with it. Refused while a running or paused sandbox mounts it."
        confirmLabel="Delete volume"
        onConfirm={() =>
          deleting && remove.mutate(deleting.volumeID, { onSuccess: () => setDeleting(undefined) })
        }
        pending={remove.isPending}
        error={remove.error}
        testId="delete-volume-dialog"
      />
    </div>
  );
}
