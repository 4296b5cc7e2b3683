import { useQuery, useQueryClient } from "@tanstack/react-query";
import { type DragEvent, useEffect, useRef, useState } from "react";
import { ConfirmDialog, FormDialog } from "../dialog.js";
import { formatBytes, formatTime } from "../format.js";
import { useSlashFocus } from "../shortcuts.js";
import { Empty, Loading } from "../status.js";
import { FileEditor } from "./file-editor.js";
import { type FileEntry, joinPath, parentOf, saveBlob } from "./file-entry.js";
import type { FileSource } from "./file-source.js";

function ErrorText({ message, title }: { message?: string; title: string }) {
  if (!message) return null;
  return (
    <div className="notice error" role="alert">
      <span className="title">{title}</span>
      <div>{message}</div>
    </div>
  );
}

function PathBar({ path, onGo }: { path: string; onGo(path: string): void }) {
  const parts = path.split("/").filter(Boolean);
  return (
    <nav className="pathbar" aria-label="Current directory">
      <button type="button" className="crumb" onClick={() => onGo("/")} aria-label="Root directory">
        /
      </button>
      {parts.map((part, i) => {
        const to = `/${parts.slice(0, i + 1).join("/")}`;
        return (
          <span key={to} className="row" style={{ gap: 2 }}>
            <button
              type="button"
              onClick={() => onGo(to)}
              aria-current={i === parts.length - 1 ? "page" : undefined}
            >
              {part}
            </button>
            {i < parts.length - 1 && <span className="faint">/</span>}
          </span>
        );
      })}
    </nav>
  );
}

function icon(e: FileEntry): string {
  if (e.type === "directory") return "▸";
  if (e.type === "symlink") return "↪";
  return "·";
}

type WatchState =
  | { kind: "off" }
  | { kind: "starting" }
  | { kind: "live" }
  | { kind: "ended"; error?: string };

/**
 * Browse, upload, download, view and edit the files of a source; the directory shown is the
 * `path` its parent keeps (in the URL), and refreshes live where the source can watch.
 */
export function FileBrowser({
  source,
  path,
  onPath,
}: {
  source: FileSource;
  path: string;
  onPath(path: string): void;
}) {
  const queryClient = useQueryClient();
  const queryKey = ["files", source.key, path];
  const list = useQuery({
    queryKey,
    queryFn: ({ signal }) => source.list(path, signal),
    // without a watch, poll; with one, events refresh it
    refetchInterval: source.watch ? false : 5000,
  });
  const [open, setOpen] = useState<FileEntry>();
  const [removing, setRemoving] = useState<FileEntry>();
  const [removeError, setRemoveError] = useState<string>();
  const [removePending, setRemovePending] = useState(false);
  const [mkdirOpen, setMkdirOpen] = useState(false);
  const [dirName, setDirName] = useState("");
  const [mkdirError, setMkdirError] = useState<string>();
  const [upload, setUpload] = useState<{ done: number; total: number; error?: string }>();
  const [actionError, setActionError] = useState<string>();
  const [dragging, setDragging] = useState(false);
  const [watch, setWatch] = useState<WatchState>({ kind: "off" });
  const [watchGeneration, setWatchGeneration] = useState(0);
  const [goTo, setGoTo] = useState(path);
  const goRef = useRef<HTMLInputElement>(null);
  const fileInput = useRef<HTMLInputElement>(null);
  useSlashFocus(goRef);
  useEffect(() => setGoTo(path), [path]);

  const refresh = () => queryClient.invalidateQueries({ queryKey: ["files", source.key] });

  // biome-ignore lint/correctness/useExhaustiveDependencies: a new watch per source, directory and retry
  useEffect(() => {
    if (!source.watch) return;
    const controller = new AbortController();
    let timer: ReturnType<typeof setTimeout> | undefined;
    setWatch({ kind: "starting" });
    source
      .watch(
        path,
        {
          onChange: () => {
            clearTimeout(timer);
            timer = setTimeout(() => void queryClient.invalidateQueries({ queryKey }), 150);
          },
          onEnd: (error) =>
            setWatch({ kind: "ended", error: error === undefined ? undefined : source.describeError(error) }),
        },
        controller.signal,
      )
      .then(
        () => !controller.signal.aborted && setWatch({ kind: "live" }),
        (err) => !controller.signal.aborted && setWatch({ kind: "ended", error: source.describeError(err) }),
      );
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [source, path, watchGeneration]);

  const uploadFiles = async (files: File[]) => {
    if (files.length === 0) return;
    setUpload({ done: 0, total: files.length });
    for (const [i, file] of files.entries()) {
      try {
        await source.write(joinPath(path, file.name), file);
        setUpload({ done: i + 1, total: files.length });
      } catch (err) {
        setUpload({ done: i, total: files.length, error: `${file.name}: ${source.describeError(err)}` });
        void refresh();
        return;
      }
    }
    setUpload(undefined);
    void refresh();
  };

  const download = async (entry: FileEntry) => {
    setActionError(undefined);
    try {
      saveBlob(await source.read(entry.path), entry.name);
    } catch (err) {
      setActionError(`Downloading ${entry.path}: ${source.describeError(err)}`);
    }
  };

  const remove = async () => {
    if (!removing) return;
    setRemovePending(true);
    setRemoveError(undefined);
    try {
      await source.remove(removing.path);
      setRemoving(undefined);
      void refresh();
    } catch (err) {
      setRemoveError(source.describeError(err));
    } finally {
      setRemovePending(false);
    }
  };

  const mkdir = async () => {
    setMkdirError(undefined);
    try {
      await source.makeDir(joinPath(path, dirName.trim()));
      setMkdirOpen(false);
      setDirName("");
      void refresh();
    } catch (err) {
      setMkdirError(source.describeError(err));
    }
  };

  const onDrop = (e: DragEvent) => {
    e.preventDefault();
    setDragging(false);
    void uploadFiles([...e.dataTransfer.files]);
  };

  if (open)
    return <FileEditor source={source} entry={open} onClose={() => setOpen(undefined)} onSaved={refresh} />;

  const entries = list.data ?? [];
  return (
    <section className="page" style={{ padding: 0 }} aria-label="Files">
      <div className="row">
        <button
          type="button"
          className="small"
          onClick={() => onPath(parentOf(path))}
          disabled={path === "/"}
        >
          ↑ Up
        </button>
        <PathBar path={path} onGo={onPath} />
        <span className="grow" />
        {source.watch && (
          <span className="muted" role="status" data-testid="watch-status">
            {watch.kind === "live" && "● live"}
            {watch.kind === "starting" && "connecting…"}
            {watch.kind === "ended" && (
              <>
                watch ended{watch.error ? `: ${watch.error}` : ""}{" "}
                <button type="button" className="link" onClick={() => setWatchGeneration((g) => g + 1)}>
                  retry
                </button>
              </>
            )}
          </span>
        )}
      </div>
      <div className="row">
        <form
          className="row grow"
          onSubmit={(e) => {
            e.preventDefault();
            if (goTo.trim()) onPath(goTo.trim());
          }}
        >
          <label className="visually-hidden" htmlFor="file-goto">
            Go to path
          </label>
          <input
            id="file-goto"
            ref={goRef}
            className="grow mono"
            value={goTo}
            onChange={(e) => setGoTo(e.target.value)}
            placeholder="/path/to/dir"
          />
          <button type="submit" className="small">
            Go
          </button>
        </form>
        <button type="button" className="small" onClick={() => setMkdirOpen(true)} data-testid="file-mkdir">
          New folder
        </button>
        <label className="button small" htmlFor="file-upload-input">
          Upload…
        </label>
        <input
          id="file-upload-input"
          ref={fileInput}
          type="file"
          multiple
          className="visually-hidden"
          data-testid="file-upload"
          aria-label="Upload files to this directory"
          onChange={(e) => {
            const files = [...(e.target.files ?? [])];
            e.target.value = "";
            void uploadFiles(files);
          }}
        />
        <button type="button" className="small" onClick={() => void refresh()}>
          Refresh
        </button>
      </div>
      {upload && (
        <div
          className={`notice ${upload.error ? "error" : "info"}`}
          role="status"
          data-testid="upload-status"
        >
          {upload.error
            ? `Upload stopped after ${upload.done} of ${upload.total}: ${upload.error}`
            : `Uploading ${upload.done + 1} of ${upload.total}…`}
          {upload.error && (
            <button
              type="button"
              className="link"
              onClick={() => setUpload(undefined)}
              style={{ marginLeft: 8 }}
            >
              dismiss
            </button>
          )}
        </div>
      )}
      <ErrorText title="Error" message={actionError} />
      <ErrorText
        title={`Cannot list ${path}`}
        message={list.error ? source.describeError(list.error) : undefined}
      />
      {/* biome-ignore lint/a11y/noStaticElementInteractions: a drop target for files; the Upload button is the keyboard's way */}
      <div
        className={`table-wrap dropzone${dragging ? " dragging" : ""}`}
        onDragOver={(e) => {
          e.preventDefault();
          setDragging(true);
        }}
        onDragLeave={() => setDragging(false)}
        onDrop={onDrop}
      >
        {list.isPending ? (
          <Loading label={`Listing ${path}…`} />
        ) : entries.length === 0 && !list.error ? (
          <Empty title="This directory is empty">Upload files, or drop them here.</Empty>
        ) : (
          <table aria-label={`Files in ${path}`} data-testid="file-list">
            <thead>
              <tr>
                <th>Name</th>
                <th className="num">Size</th>
                <th>Permissions</th>
                <th>Owner</th>
                <th>Modified</th>
                <th>
                  <span className="visually-hidden">Actions</span>
                </th>
              </tr>
            </thead>
            <tbody>
              {entries.map((e) => (
                <tr key={e.path} data-testid={`file-row-${e.name}`}>
                  <td>
                    <button
                      type="button"
                      className="link file-name"
                      onClick={() => (e.type === "directory" ? onPath(e.path) : setOpen(e))}
                      title={e.symlinkTarget ? `→ ${e.symlinkTarget}` : e.path}
                    >
                      <span className="file-icon" aria-hidden="true">
                        {icon(e)}
                      </span>
                      {e.name}
                      {e.type === "directory" ? "/" : ""}
                    </button>
                  </td>
                  <td className="num">{e.type === "directory" ? "—" : formatBytes(e.size)}</td>
                  <td className="mono">{e.permissions}</td>
                  <td>
                    {e.owner}
                    {e.group && e.group !== e.owner ? `:${e.group}` : ""}
                  </td>
                  <td className="nowrap">{e.modified ? formatTime(e.modified.toISOString()) : "—"}</td>
                  <td className="actions">
                    <div className="row">
                      {e.type !== "directory" && (
                        <button
                          type="button"
                          className="small"
                          onClick={() => void download(e)}
                          aria-label={`Download ${e.name}`}
                        >
                          Download
                        </button>
                      )}
                      <button
                        type="button"
                        className="small danger"
                        onClick={() => {
                          setRemoveError(undefined);
                          setRemoving(e);
                        }}
                        aria-label={`Delete ${e.name}`}
                      >
                        Delete
                      </button>
                    </div>
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <ConfirmDialog
        open={removing !== undefined}
        onClose={() => setRemoving(undefined)}
        title={`Delete ${removing?.name ?? ""}?`}
        message={
          removing?.type === "directory"
            ? `${removing.path} and everything in it will be deleted.`
            : `${removing?.path ?? ""} will be deleted.`
        }
        confirmLabel="Delete"
        onConfirm={() => void remove()}
        pending={removePending}
        error={removeError ? new Error(removeError) : undefined}
        testId="file-delete-dialog"
      />
      <FormDialog
        open={mkdirOpen}
        onClose={() => setMkdirOpen(false)}
        title="New folder"
        submitLabel="Create"
        onSubmit={() => void mkdir()}
        error={mkdirError ? new Error(mkdirError) : undefined}
        invalid={!dirName.trim() || dirName.includes("/")}
      >
        <label className="field">
          <span>Name, in {path}</span>
          <input
            value={dirName}
            onChange={(e) => setDirName(e.target.value)}
            data-autofocus
            data-testid="mkdir-name"
          />
        </label>
      </FormDialog>
    </section>
  );
}
