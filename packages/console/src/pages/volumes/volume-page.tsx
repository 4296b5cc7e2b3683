import { useMemo, useState } from "react";
import { Link, useNavigate, useParams, useSearchParams } from "react-router-dom";
import { errorMessage } from "../../api/errors.js";
import { useDeleteVolume, useVolume, useVolumeContent, type VolumeEntry } from "../../api/volumes.js";
import { ConfirmDialog } from "../../components/dialog.js";
import { FileBrowser } from "../../components/files/file-browser.js";
import { byKindAndName, type FileEntry } from "../../components/files/file-entry.js";
import type { FileSource } from "../../components/files/file-source.js";
import { formatMiB, formatTime } from "../../components/format.js";
import { ErrorNotice, Loading } from "../../components/status.js";

/** `0o755` → `rwxr-xr-x`. */
function modeString(mode: number, type: VolumeEntry["type"]): string {
  const bits = ["r", "w", "x"];
  let s = type === "directory" ? "d" : type === "symlink" ? "l" : "-";
  for (let i = 8; i >= 0; i--) s += mode & (1 << i) ? bits[(8 - i) % 3] : "-";
  return s;
}

function toEntry(e: VolumeEntry): FileEntry {
  return {
    name: e.name,
    path: e.path,
    type: e.type,
    size: e.size,
    permissions: modeString(e.mode, e.type),
    owner: String(e.uid),
    group: String(e.gid),
    modified: new Date(e.mtime),
    symlinkTarget: e.target,
  };
}

/** A volume: its use, who mounts it, and its files through the content API. */
export function VolumePage() {
  const volumeID = useParams().volumeID!;
  const navigate = useNavigate();
  const volume = useVolume(volumeID);
  const content = useVolumeContent(volumeID, volume.data?.token);
  const remove = useDeleteVolume();
  const [deleting, setDeleting] = useState(false);
  const [params, setParams] = useSearchParams();
  const path = params.get("path") || "/";
  const v = volume.data;

  const source = useMemo<FileSource | undefined>(
    () =>
      content && {
        key: `volume:${volumeID}`,
        home: "/",
        list: async (p, signal) => (await content.list(p, signal)).map(toEntry).sort(byKindAndName),
        read: content.read,
        write: async (p, data) => {
          await content.write(p, data);
        },
        makeDir: async (p) => {
          await content.makeDir(p);
        },
        remove: content.remove,
        describeError: errorMessage,
      },
    [content, volumeID],
  );

  return (
    <div className="page">
      <div className="breadcrumbs">
        <Link to="/volumes">Volumes</Link> / {v?.name ?? volumeID}
      </div>
      <header className="page-header">
        <h1>{v?.name ?? volumeID}</h1>
        <span className="mono faint">{volumeID}</span>
        <span className="spacer" />
        <button
          type="button"
          className="danger"
          onClick={() => {
            remove.reset();
            setDeleting(true);
          }}
          disabled={!v}
          data-testid="volume-delete"
        >
          Delete
        </button>
      </header>
      <ErrorNotice error={volume.error} title="Could not read the volume" />
      {volume.isPending ? (
        <Loading />
      ) : v ? (
        <>
          <div className="cards">
            <div className="card">
              <div className="label">Used</div>
              <div className="value">{formatMiB(v.usedMB)}</div>
              <div className="sub">of {formatMiB(v.sizeMB)}</div>
            </div>
            <div className="card">
              <div className="label">Mounted by</div>
              <div className="value">{v.mountedBy?.length ?? 0}</div>
              <div className="sub">
                {v.mountedBy?.map((id) => (
                  <Link
                    key={id}
                    to={`/sandboxes/${encodeURIComponent(id)}`}
                    className="mono"
                    style={{ marginRight: 6 }}
                  >
                    {id}
                  </Link>
                ))}
              </div>
            </div>
            <div className="card">
              <div className="label">Created</div>
              <div className="sub">{formatTime(v.createdAt)}</div>
            </div>
          </div>
          <h2>Files</h2>
          {source && <FileBrowser source={source} path={path} onPath={(p) => setParams({ path: p })} />}
        </>
      ) : null}
      <ConfirmDialog
        open={deleting}
        onClose={() => setDeleting(false)}
        title={`Delete volume ${v?.name ?? ""}?`}
        message="Its files are deleted with it. Refused while a running or paused sandbox mounts it."
        confirmLabel="Delete volume"
        onConfirm={() => remove.mutate(volumeID, { onSuccess: () => navigate("/volumes") })}
        pending={remove.isPending}
        error={remove.error}
      />
    </div>
  );
}
