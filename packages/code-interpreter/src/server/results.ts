import type { MimeBundle } from "../kernels/protocol.js";
import type { ExecutionEvent } from "./kernel-process.js";

/** Jupyter MIME types under the names @e2b/code-interpreter's `Result` reads. */
const FIELDS: Record<string, string> = {
  "text/plain": "text",
  "text/html": "html",
  "text/markdown": "markdown",
  "image/svg+xml": "svg",
  "image/png": "png",
  "image/jpeg": "jpeg",
  "application/pdf": "pdf",
  "text/latex": "latex",
  "application/json": "json",
  "application/javascript": "javascript",
  "e2b/data": "data",
  "e2b/chart": "chart",
};

/** A display's fields; MIME types the client has no name for go under `extra`. */
export function resultFields(data: MimeBundle): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  const extra: Record<string, unknown> = {};
  for (const [mime, value] of Object.entries(data)) {
    const field = FIELDS[mime];
    if (field) out[field] = value;
    else extra[mime] = value;
  }
  // a string's repr: 'abc' is shown as abc, as E2B's server does
  if (
    typeof out.text === "string" &&
    out.text.length >= 2 &&
    out.text.startsWith("'") &&
    out.text.endsWith("'")
  )
    out.text = out.text.slice(1, -1);
  if (Object.keys(extra).length > 0) out.extra = extra;
  return out;
}

/** One line of the /execute stream for a kernel event. */
export function streamMessage(e: ExecutionEvent): Record<string, unknown> {
  switch (e.ev) {
    case "stream":
      return { type: e.name, text: e.text, timestamp: new Date().toISOString() };
    case "result":
      return { type: "result", ...resultFields(e.data), is_main_result: e.main };
    case "error":
      return { type: "error", name: e.name, value: e.value, traceback: e.traceback.join("\n") };
    case "count":
      return { type: "number_of_executions", execution_count: e.n };
  }
}
