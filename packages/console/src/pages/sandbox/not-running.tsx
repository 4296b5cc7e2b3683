import type { SandboxDetail } from "../../api/sandboxes.js";

/** Shown instead of what needs envd, while the sandbox is paused or broken. */
export function NotRunning({ sandbox, what }: { sandbox: SandboxDetail; what: string }) {
  return (
    <div className="notice info" role="status">
      <div className="title">The sandbox is {sandbox.state}</div>
      <div>
        {sandbox.state === "paused" || sandbox.state === "error"
          ? `Resume it (the Resume button above) to ${what}.`
          : `It must be running to ${what}.`}
      </div>
    </div>
  );
}
