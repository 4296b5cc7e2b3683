import type { ReactNode } from "react";
import { ApiError, errorMessage, NetworkError } from "../api/errors.js";

/** The API's error as it answered: its message, with status and request ID for a report. */
export function ErrorNotice({ error, title }: { error: unknown; title?: string }) {
  if (!error) return null;
  const status = error instanceof ApiError ? error.status : undefined;
  const requestId = error instanceof ApiError ? error.requestId : undefined;
  return (
    <div className="notice error" role="alert">
      <span className="title">{title ?? (error instanceof NetworkError ? "Network error" : "Error")}</span>
      {status !== undefined && <span className="code">{status}</span>}
      <div>{errorMessage(error)}</div>
      {requestId && <div className="faint mono">request {requestId}</div>}
    </div>
  );
}

export function Loading({ label = "Loading…" }: { label?: string }) {
  return (
    <div className="loading" role="status">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Empty({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <div className="title">{title}</div>
      {children}
    </div>
  );
}

export type Tone = "ok" | "warn" | "danger" | "info" | "";

export function Badge({ tone, children, title }: { tone: Tone; children: ReactNode; title?: string }) {
  return (
    <span className={`badge ${tone}`} title={title}>
      {children}
    </span>
  );
}

const STATE_TONES: Record<string, Tone> = {
  running: "ok",
  paused: "info",
  error: "danger",
  lost: "warn",
  ready: "ok",
  building: "info",
  waiting: "",
  delivered: "ok",
  retrying: "warn",
  failed: "danger",
  allowed: "ok",
  denied: "danger",
  draining: "warn",
  down: "danger",
};

/** A state or status word in its colour. */
export function StateBadge({ state, detail, title }: { state: string; detail?: string; title?: string }) {
  return (
    <Badge tone={STATE_TONES[state] ?? ""} title={title}>
      {state}
      {detail ? ` · ${detail}` : ""}
    </Badge>
  );
}
