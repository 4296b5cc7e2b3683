import { useEffect, useRef, useState } from "react";
import { formatBytes } from "../format.js";
import { Loading } from "../status.js";
import { asEditableText, type FileEntry, saveBlob } from "./file-entry.js";
import type { FileSource } from "./file-source.js";

const MAX_EDIT_BYTES = 2 * 1024 * 1024;

type Loaded =
  | { kind: "loading" }
  | { kind: "text"; text: string }
  | { kind: "other"; reason: string; blob: Blob }
  | { kind: "error"; message: string };

/** A text file, viewed and edited in place; Save (or Ctrl+S) writes it back. */
export function FileEditor({
  source,
  entry,
  onClose,
  onSaved,
}: {
  source: FileSource;
  entry: FileEntry;
  onClose(): void;
  onSaved(): void;
}) {
  const [loaded, setLoaded] = useState<Loaded>({ kind: "loading" });
  const [text, setText] = useState("");
  const [saved, setSaved] = useState("");
  const [saving, setSaving] = useState(false);
  const [saveError, setSaveError] = useState<string>();
  const [savedAt, setSavedAt] = useState<Date>();
  const area = useRef<HTMLTextAreaElement>(null);

  useEffect(() => {
    let cancelled = false;
    setLoaded({ kind: "loading" });
    source.read(entry.path).then(
      async (blob) => {
        const editable = await asEditableText(blob, MAX_EDIT_BYTES);
        if (cancelled) return;
        if ("text" in editable) {
          setText(editable.text);
          setSaved(editable.text);
          setLoaded({ kind: "text", text: editable.text });
        } else setLoaded({ kind: "other", reason: editable.reason, blob });
      },
      (err) => !cancelled && setLoaded({ kind: "error", message: source.describeError(err) }),
    );
    return () => {
      cancelled = true;
    };
  }, [source, entry.path]);

  useEffect(() => {
    if (loaded.kind === "text") area.current?.focus();
  }, [loaded.kind]);

  const dirty = loaded.kind === "text" && text !== saved;
  const save = async () => {
    if (!dirty || saving) return;
    setSaving(true);
    setSaveError(undefined);
    try {
      await source.write(entry.path, new Blob([text], { type: "text/plain" }));
      setSaved(text);
      setSavedAt(new Date());
      onSaved();
    } catch (err) {
      setSaveError(source.describeError(err));
    } finally {
      setSaving(false);
    }
  };
  const close = () => {
    if (dirty && !window.confirm(`Discard your changes to ${entry.name}?`)) return;
    onClose();
  };

  return (
    <section className="page" style={{ padding: 0 }} aria-label={`File ${entry.path}`}>
      <div className="row">
        <button type="button" className="small" onClick={close} data-testid="editor-close">
          ← Back
        </button>
        <span className="mono">{entry.path}</span>
        <span className="faint">{formatBytes(entry.size)}</span>
        {dirty && <span className="badge warn">unsaved</span>}
        {!dirty && savedAt && <span className="badge ok">saved</span>}
        <span className="grow" />
        <button
          type="button"
          className="small"
          onClick={() =>
            loaded.kind === "other"
              ? saveBlob(loaded.blob, entry.name)
              : saveBlob(new Blob([text], { type: "text/plain" }), entry.name)
          }
          disabled={loaded.kind === "loading" || loaded.kind === "error"}
        >
          Download
        </button>
        <button
          type="button"
          className="small primary"
          onClick={() => void save()}
          disabled={!dirty || saving}
          data-testid="editor-save"
        >
          {saving ? "Saving…" : "Save"}
        </button>
      </div>
      {saveError && (
        <div className="notice error" role="alert">
          <span className="title">Could not save</span> {saveError}
        </div>
      )}
      {loaded.kind === "loading" && <Loading label={`Reading ${entry.name}…`} />}
      {loaded.kind === "error" && (
        <div className="notice error" role="alert">
          <span className="title">Could not read {entry.path}</span> {loaded.message}
        </div>
      )}
      {loaded.kind === "other" && (
        <div className="notice info" role="status">
          {loaded.reason} Download it instead.
        </div>
      )}
      {loaded.kind === "text" && (
        <textarea
          className="editor"
          value={text}
          onChange={(e) => setText(e.target.value)}
          onKeyDown={(e) => {
            if ((e.ctrlKey || e.metaKey) && e.key === "s") {
              e.preventDefault();
              void save();
            }
            if (e.key === "Escape") {
              e.preventDefault();
              close();
            }
          }}
          spellCheck={false}
          aria-label={`Contents of ${entry.name}`}
          data-testid="file-editor"
          ref={area}
        />
      )}
    </section>
  );
}
