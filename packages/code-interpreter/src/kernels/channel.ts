import { writeSync } from "node:fs";
import { createInterface } from "node:readline";
import { EVENTS_FD, endMarker, type KernelEvent, type KernelRequest } from "./protocol.js";

/** A kernel's side of the protocol: events written synchronously to fd 3, requests read from stdin. */
export function emit(event: KernelEvent): void {
  writeSync(EVENTS_FD, `${JSON.stringify(event)}\n`);
}

export function onRequests(handle: (req: KernelRequest) => void): void {
  const lines = createInterface({ input: process.stdin });
  lines.on("line", (line) => {
    let req: KernelRequest;
    try {
      req = JSON.parse(line) as KernelRequest;
    } catch {
      return;
    }
    handle(req);
  });
  lines.on("close", () => process.exit(0));
}

/** Runs executions one after another, each to its `done`. */
export function serially(run: (req: Extract<KernelRequest, { op: "execute" }>) => Promise<void>) {
  let chain = Promise.resolve();
  return (req: Extract<KernelRequest, { op: "execute" }>) => {
    chain = chain
      .then(() => run(req))
      .catch((err) => emit({ ev: "fatal", message: String(err) }))
      .then(() => {
        writeSync(1, endMarker(req.id));
        writeSync(2, endMarker(req.id));
        emit({ ev: "done", id: req.id });
      });
  };
}
