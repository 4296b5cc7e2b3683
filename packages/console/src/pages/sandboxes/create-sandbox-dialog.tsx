import type { Schemas } from "@x/platform-client";
import { useId, useState } from "react";
import { useNavigate } from "react-router-dom";
import { useCreateSandbox } from "../../api/sandboxes.js";
import { templateLabel, useTemplates } from "../../api/templates.js";
import { FormDialog } from "../../components/dialog.js";

/** `a=1, b=2` → `{a: "1", b: "2"}`. */
export function parseMetadata(text: string): Record<string, string> | undefined {
  const entries = text
    .split(/[,\n&]+/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const eq = p.indexOf("=");
      return eq < 0 ? [p, ""] : [p.slice(0, eq).trim(), p.slice(eq + 1).trim()];
    });
  return entries.length > 0 ? Object.fromEntries(entries) : undefined;
}

/** Starts a sandbox from a template; opens it when it runs. */
export function CreateSandboxDialog({ open, onClose }: { open: boolean; onClose(): void }) {
  const create = useCreateSandbox();
  const templates = useTemplates();
  const navigate = useNavigate();
  const listId = useId();
  const [template, setTemplate] = useState("base");
  const [timeout, setTimeoutSeconds] = useState("300");
  const [runtime, setRuntime] = useState<"" | Schemas["SandboxRuntime"]>("");
  const [metadata, setMetadata] = useState("");
  const [autoPause, setAutoPause] = useState(false);
  const seconds = Number(timeout);
  const valid = template.trim() !== "" && Number.isInteger(seconds) && seconds >= 0;

  const close = () => {
    create.reset();
    onClose();
  };
  const submit = () =>
    create.mutate(
      {
        templateID: template.trim(),
        timeout: seconds,
        ...(runtime ? { runtime } : {}),
        metadata: parseMetadata(metadata),
        autoPause,
      },
      {
        onSuccess: (sandbox) => {
          close();
          navigate(`/sandboxes/${encodeURIComponent(sandbox.sandboxID)}`);
        },
      },
    );

  return (
    <FormDialog
      open={open}
      onClose={close}
      title="Create a sandbox"
      submitLabel="Create"
      onSubmit={submit}
      pending={create.isPending}
      error={create.error}
      invalid={!valid}
      testId="create-sandbox-dialog"
      submitTestId="create-sandbox-submit"
    >
      <label className="field">
        <span>Template</span>
        <input
          value={template}
          onChange={(e) => setTemplate(e.target.value)}
          list={listId}
          required
          data-autofocus
          data-testid="create-sandbox-template"
        />
        <datalist id={listId}>
          {templates.data?.map((t) => (
            <option key={t.templateID} value={templateLabel(t)} />
          ))}
        </datalist>
        <span className="hint">A name (name, team/name, name:tag), a template ID or a snapshot ID.</span>
      </label>
      <div className="row" style={{ alignItems: "start" }}>
        <label className="field grow">
          <span>Timeout (seconds)</span>
          <input
            type="number"
            min={0}
            step={1}
            value={timeout}
            onChange={(e) => setTimeoutSeconds(e.target.value)}
            data-testid="create-sandbox-timeout"
          />
        </label>
        <label className="field grow">
          <span>Runtime</span>
          <select value={runtime} onChange={(e) => setRuntime(e.target.value as typeof runtime)}>
            <option value="">Platform default</option>
            <option value="runsc">runsc (gVisor)</option>
            <option value="runc">runc</option>
          </select>
        </label>
      </div>
      <label className="field">
        <span>Metadata</span>
        <input
          value={metadata}
          onChange={(e) => setMetadata(e.target.value)}
          placeholder="user=alice, app=demo"
        />
      </label>
      <label className="check">
        <input type="checkbox" checked={autoPause} onChange={(e) => setAutoPause(e.target.checked)} />
        Pause instead of kill when the timeout ends
      </label>
    </FormDialog>
  );
}
