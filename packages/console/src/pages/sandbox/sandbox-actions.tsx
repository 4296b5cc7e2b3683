import { useState } from "react";
import { useNavigate } from "react-router-dom";
import {
  type SandboxDetail,
  useKillSandbox,
  usePauseSandbox,
  useResumeSandbox,
  useSetTimeout,
  useSnapshotSandbox,
} from "../../api/sandboxes.js";
import { CopyButton } from "../../components/copy-button.js";
import { ConfirmDialog, Dialog, FormDialog } from "../../components/dialog.js";

type Open = "pause" | "resume" | "timeout" | "snapshot" | "kill" | undefined;

function secondsLeft(sandbox: SandboxDetail): number {
  return Math.max(0, Math.round((Date.parse(sandbox.endAt) - Date.now()) / 1000));
}

/** Pause, resume, timeout, snapshot and kill, each behind its dialog. */
export function SandboxActions({ sandbox }: { sandbox: SandboxDetail }) {
  const id = sandbox.sandboxID;
  const navigate = useNavigate();
  const [open, setOpen] = useState<Open>();
  const pause = usePauseSandbox(id);
  const resume = useResumeSandbox(id);
  const setTimeoutM = useSetTimeout(id);
  const snapshot = useSnapshotSandbox(id);
  const kill = useKillSandbox(id);
  const [keepMemory, setKeepMemory] = useState(true);
  const [timeout, setTimeoutText] = useState("300");
  const [snapName, setSnapName] = useState("");
  const [snapMemory, setSnapMemory] = useState(true);

  const close = () => {
    setOpen(undefined);
    for (const m of [pause, resume, setTimeoutM, kill]) m.reset();
  };
  const openWith = (which: Open) => {
    if (which === "timeout" || which === "resume")
      setTimeoutText(String(Math.max(secondsLeft(sandbox), 300)));
    if (which === "snapshot") snapshot.reset();
    setOpen(which);
  };
  const seconds = Number(timeout);
  const validSeconds = timeout.trim() !== "" && Number.isInteger(seconds) && seconds >= 0;
  const running = sandbox.state === "running";
  const canResume = sandbox.state === "paused" || sandbox.state === "error";

  return (
    <fieldset className="row actions-group">
      <legend className="visually-hidden">Sandbox actions</legend>
      <button type="button" onClick={() => openWith("pause")} disabled={!running} data-testid="action-pause">
        Pause
      </button>
      <button
        type="button"
        onClick={() => openWith("resume")}
        disabled={!canResume}
        data-testid="action-resume"
      >
        Resume
      </button>
      <button
        type="button"
        onClick={() => openWith("timeout")}
        disabled={!running}
        data-testid="action-timeout"
      >
        Set timeout
      </button>
      <button
        type="button"
        onClick={() => openWith("snapshot")}
        disabled={!running && sandbox.state !== "paused"}
        data-testid="action-snapshot"
      >
        Snapshot
      </button>
      <button type="button" className="danger" onClick={() => openWith("kill")} data-testid="action-kill">
        Kill
      </button>

      <FormDialog
        open={open === "pause"}
        onClose={close}
        title={`Pause ${id}`}
        submitLabel="Pause"
        onSubmit={() => pause.mutate(keepMemory, { onSuccess: close })}
        pending={pause.isPending}
        error={pause.error}
        testId="pause-dialog"
        submitTestId="pause-confirm"
      >
        <p style={{ margin: 0 }}>Its processes stop until it is resumed; its files are kept.</p>
        <label className="check">
          <input
            type="checkbox"
            checked={keepMemory}
            onChange={(e) => setKeepMemory(e.target.checked)}
            data-autofocus
          />
          Keep memory (resume continues the processes; otherwise they start afresh)
        </label>
      </FormDialog>

      <FormDialog
        open={open === "resume"}
        onClose={close}
        title={`Resume ${id}`}
        submitLabel="Resume"
        onSubmit={() => resume.mutate(seconds, { onSuccess: close })}
        pending={resume.isPending}
        error={resume.error}
        invalid={!validSeconds}
        testId="resume-dialog"
        submitTestId="resume-confirm"
      >
        <label className="field">
          <span>Keep it running for at least (seconds)</span>
          <input
            type="number"
            min={0}
            value={timeout}
            onChange={(e) => setTimeoutText(e.target.value)}
            data-autofocus
            data-testid="resume-timeout"
          />
        </label>
      </FormDialog>

      <FormDialog
        open={open === "timeout"}
        onClose={close}
        title={`Timeout of ${id}`}
        submitLabel="Set timeout"
        onSubmit={() => setTimeoutM.mutate(seconds, { onSuccess: close })}
        pending={setTimeoutM.isPending}
        error={setTimeoutM.error}
        invalid={!validSeconds}
        testId="timeout-dialog"
        submitTestId="timeout-confirm"
      >
        <label className="field">
          <span>Expires this many seconds from now</span>
          <input
            type="number"
            min={0}
            value={timeout}
            onChange={(e) => setTimeoutText(e.target.value)}
            data-autofocus
            data-testid="timeout-seconds"
          />
          <span className="hint">Replaces the current deadline ({secondsLeft(sandbox)} s left).</span>
        </label>
      </FormDialog>

      {snapshot.data && open === "snapshot" ? (
        <Dialog open onClose={close} title="Snapshot taken" testId="snapshot-result">
          <p style={{ margin: 0 }}>
            Kept {snapshot.data.kind === "memory" ? "files and running processes" : "files"}. Start sandboxes
            from it by this ID:
          </p>
          <div className="secret-box">
            <input readOnly value={snapshot.data.snapshotID} aria-label="Snapshot ID" />
            <CopyButton text={snapshot.data.snapshotID} />
          </div>
          <div className="dialog-actions">
            <button type="button" className="primary" onClick={close} data-autofocus>
              Done
            </button>
          </div>
        </Dialog>
      ) : (
        <FormDialog
          open={open === "snapshot"}
          onClose={close}
          title={`Snapshot ${id}`}
          submitLabel="Take snapshot"
          onSubmit={() => snapshot.mutate({ name: snapName.trim() || undefined, memory: snapMemory })}
          pending={snapshot.isPending}
          error={snapshot.error}
          testId="snapshot-dialog"
          submitTestId="snapshot-confirm"
        >
          <label className="field">
            <span>Name (optional)</span>
            <input
              value={snapName}
              onChange={(e) => setSnapName(e.target.value)}
              placeholder="my-snapshot"
              data-autofocus
              data-testid="snapshot-name"
            />
            <span className="hint">A snapshot of an existing name becomes its newest build.</span>
          </label>
          <label className="check">
            <input type="checkbox" checked={snapMemory} onChange={(e) => setSnapMemory(e.target.checked)} />
            Keep running processes (gVisor; falls back to files only where it cannot)
          </label>
        </FormDialog>
      )}

      <ConfirmDialog
        open={open === "kill"}
        onClose={close}
        title={`Kill ${id}?`}
        message="The sandbox and its files are removed at once. This cannot be undone."
        confirmLabel="Kill"
        onConfirm={() =>
          kill.mutate(undefined, {
            onSuccess: () => {
              close();
              navigate("/sandboxes");
            },
          })
        }
        pending={kill.isPending}
        error={kill.error}
        testId="kill-dialog"
      />
    </fieldset>
  );
}
