import type { Schemas } from "@x/platform-client";
import { useSandboxEvents } from "../../api/sandboxes.js";
import { formatDuration, formatTime } from "../../components/format.js";
import { Badge, Empty, ErrorNotice, Loading, type Tone } from "../../components/status.js";
import { RelativeTime } from "../../components/time.js";
import { useSandboxContext } from "./sandbox-layout.js";

const TONES: Record<Schemas["SandboxEventType"], Tone> = {
  "sandbox.lifecycle.created": "ok",
  "sandbox.lifecycle.killed": "",
  "sandbox.lifecycle.updated": "info",
  "sandbox.lifecycle.paused": "info",
  "sandbox.lifecycle.resumed": "ok",
  "sandbox.lifecycle.timed_out": "warn",
  "sandbox.lifecycle.error": "danger",
  "sandbox.lifecycle.lost": "warn",
};

function details(e: Schemas["SandboxEvent"]): string {
  const d = e.eventData;
  const parts: string[] = [];
  if (d.kill_reason) parts.push(`reason: ${d.kill_reason}`);
  if (d.timeout_action) parts.push(`then: ${d.timeout_action}`);
  if (d.set_timeout) parts.push(`times out ${formatTime(d.set_timeout)}`);
  if (d.reason) parts.push(d.reason);
  if (d.execution)
    parts.push(
      `ran ${formatDuration(d.execution.execution_time / 1000)} on ${d.execution.vcpu_count} vCPU, ${d.execution.memory_mb} MiB`,
    );
  return parts.join(" · ");
}

/** The sandbox's lifecycle events, newest first (polled). */
export function EventsTab() {
  const sandbox = useSandboxContext();
  const events = useSandboxEvents(sandbox.sandboxID);
  if (events.isPending) return <Loading label="Loading events…" />;
  return (
    <section aria-label="Lifecycle events">
      <ErrorNotice error={events.error} title="Could not read the events" />
      {events.data && events.data.length === 0 ? (
        <div className="panel">
          <Empty title="No lifecycle events recorded" />
        </div>
      ) : (
        <div className="table-wrap">
          <table aria-label="Lifecycle events" data-testid="sandbox-events">
            <thead>
              <tr>
                <th>Time</th>
                <th>Event</th>
                <th>Details</th>
                <th>Run</th>
              </tr>
            </thead>
            <tbody>
              {events.data?.map((e) => (
                <tr key={e.id}>
                  <td className="nowrap" title={formatTime(e.timestamp)}>
                    <RelativeTime iso={e.timestamp} />
                  </td>
                  <td>
                    <Badge tone={TONES[e.type] ?? ""}>{e.type.replace("sandbox.lifecycle.", "")}</Badge>
                  </td>
                  <td className="wrap">{details(e)}</td>
                  <td className="mono faint">{e.sandboxExecutionId}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
