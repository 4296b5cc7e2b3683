import "@xterm/xterm/css/xterm.css";
import type { EnvdClient } from "@x/envd-client";
import { FitAddon } from "@xterm/addon-fit";
import { Terminal } from "@xterm/xterm";
import { useEffect, useRef, useState } from "react";
import { cssVar } from "../../components/theme.js";
import { useEnvd } from "../../envd/client.js";
import { envdErrorMessage } from "../../envd/errors.js";
import { PtySession } from "../../envd/pty.js";
import { NotRunning } from "./not-running.js";
import { useSandboxContext } from "./sandbox-layout.js";

type Status =
  | { kind: "connecting" }
  | { kind: "open"; pid: number }
  | { kind: "ended"; exitCode?: number; error?: string }
  | { kind: "failed"; error: string };

const encoder = new TextEncoder();

/** Bytes of a binary string xterm hands over (mouse reports): one byte per char. */
function binaryBytes(data: string): Uint8Array {
  const bytes = new Uint8Array(data.length);
  for (let i = 0; i < data.length; i++) bytes[i] = data.charCodeAt(i) & 0xff;
  return bytes;
}

function TerminalView({ envd, onStatus }: { envd: EnvdClient; onStatus(status: Status): void }) {
  const box = useRef<HTMLDivElement>(null);
  const status = useRef(onStatus);
  status.current = onStatus;

  useEffect(() => {
    const el = box.current;
    if (!el) return;
    const term = new Terminal({
      cursorBlink: true,
      fontFamily: cssVar("--mono"),
      fontSize: 13,
      scrollback: 5000,
      theme: { background: cssVar("--term-bg"), foreground: cssVar("--term-fg") },
    });
    const fit = new FitAddon();
    term.loadAddon(fit);
    term.open(el);
    fit.fit();
    term.focus();

    let session: PtySession | undefined;
    let disposed = false;
    status.current({ kind: "connecting" });
    PtySession.open(
      envd,
      { cols: term.cols, rows: term.rows },
      {
        onData: (data) => term.write(data),
        onExit: ({ exitCode, error }) => {
          term.write(
            `\r\n\x1b[2m[shell ended${exitCode !== undefined ? ` with code ${exitCode}` : ""}]\x1b[0m\r\n`,
          );
          status.current({ kind: "ended", exitCode, error: error ? envdErrorMessage(error) : undefined });
        },
      },
    ).then(
      (s) => {
        if (disposed) {
          void s.close();
          return;
        }
        session = s;
        status.current({ kind: "open", pid: s.processId! });
        // the box may have changed size while the shell started
        fit.fit();
        void s.resize({ cols: term.cols, rows: term.rows }).catch(() => undefined);
      },
      (err) => {
        if (!disposed) status.current({ kind: "failed", error: envdErrorMessage(err) });
      },
    );

    const input = term.onData((data) => session?.write(encoder.encode(data)));
    const binary = term.onBinary((data) => session?.write(binaryBytes(data)));
    const resize = term.onResize((size) => void session?.resize(size).catch(() => undefined));
    const observer = new ResizeObserver(() => {
      if (el.clientWidth > 0 && el.clientHeight > 0) fit.fit();
    });
    observer.observe(el);
    const onUnload = () => void session?.close();
    window.addEventListener("pagehide", onUnload);

    return () => {
      disposed = true;
      window.removeEventListener("pagehide", onUnload);
      observer.disconnect();
      input.dispose();
      binary.dispose();
      resize.dispose();
      void session?.close();
      term.dispose();
    };
  }, [envd]);

  return (
    <div ref={box} className="terminal" data-testid="terminal" aria-label="Terminal" role="application" />
  );
}

/** A login shell in the sandbox, in the browser (xterm.js over envd's Process service). */
export default function TerminalTab() {
  const sandbox = useSandboxContext();
  const envd = useEnvd(sandbox);
  const [generation, setGeneration] = useState(0);
  const [status, setStatus] = useState<Status>({ kind: "connecting" });
  if (!envd) return <NotRunning sandbox={sandbox} what="open a terminal" />;
  return (
    <section className="terminal-wrap" aria-label="Terminal">
      <div className="row">
        <span className="muted" role="status" data-testid="terminal-status">
          {status.kind === "connecting" && "Starting a login shell…"}
          {status.kind === "open" && `bash -l · pid ${status.pid}`}
          {status.kind === "ended" &&
            `The shell ended${status.exitCode !== undefined ? ` (exit code ${status.exitCode})` : ""}${status.error ? `: ${status.error}` : ""}`}
          {status.kind === "failed" && (
            <span className="notice error">Could not open a terminal: {status.error}</span>
          )}
        </span>
        <span className="grow" />
        <button
          type="button"
          className="small"
          onClick={() => setGeneration((g) => g + 1)}
          data-testid="terminal-restart"
        >
          {status.kind === "open" || status.kind === "connecting" ? "Restart shell" : "New shell"}
        </button>
      </div>
      <TerminalView key={generation} envd={envd} onStatus={setStatus} />
    </section>
  );
}
