import type { Schemas } from "@x/platform-client";
import type { Sandbox } from "../model/sandbox.js";
import type { KillReason, SandboxEventType } from "../model/webhook.js";
import type { PlatformEvent, Store } from "../store/index.js";

/**
 * The platform's own event types (`store.events`) that are sandbox lifecycle events on E2B's
 * wire, and which. Others (snapshots, a lost sandbox back with its node) stay internal.
 */
const WIRE_TYPE: Record<string, SandboxEventType> = {
  "sandbox.created": "sandbox.lifecycle.created",
  "sandbox.killed": "sandbox.lifecycle.killed",
  "sandbox.updated": "sandbox.lifecycle.updated",
  "sandbox.network_updated": "sandbox.lifecycle.updated",
  "sandbox.paused": "sandbox.lifecycle.paused",
  // its container was gone after a restart: kept as a stopped pause
  "sandbox.recovered": "sandbox.lifecycle.paused",
  "sandbox.resumed": "sandbox.lifecycle.resumed",
  "sandbox.timed_out": "sandbox.lifecycle.timed_out",
  "sandbox.broken": "sandbox.lifecycle.error",
  "sandbox.failed": "sandbox.lifecycle.error",
  "sandbox.lost": "sandbox.lifecycle.lost",
};

/** The recorded event types that are lifecycle events. */
export const LIFECYCLE_EVENT_TYPES: readonly string[] = Object.keys(WIRE_TYPE);

/** The recorded types of the wire types given. */
export function recordedTypesOf(types: readonly SandboxEventType[]): string[] {
  return LIFECYCLE_EVENT_TYPES.filter((t) => types.includes(WIRE_TYPE[t]!));
}

/** The wire type of a recorded event; undefined for one that is not a lifecycle event. */
export function wireTypeOf(recordedType: string): SandboxEventType | undefined {
  return WIRE_TYPE[recordedType];
}

/** Where a run of a sandbox begins: its create and each resume. */
const RUN_STARTS = ["sandbox.created", "sandbox.resumed"];
/** Where a run ends short of a kill: a pause, or it broke. */
const PAUSES = ["sandbox.paused", "sandbox.recovered"];
const RUN_ENDS = [...PAUSES, "sandbox.broken"];
const KILL_REASONS: readonly KillReason[] = ["request", "timeout", "shutdown"];

/** A lifecycle event as E2B's events API answers it and its webhooks send it (`SandboxEvent` of openapi.yaml). */
export type SandboxEventPayload = Schemas["SandboxEvent"];

const text = (v: unknown): string | undefined => (typeof v === "string" && v !== "" ? v : undefined);

function extras(
  type: SandboxEventType,
  data: Record<string, unknown>,
  sandbox: Sandbox | undefined,
): Partial<SandboxEventPayload["eventData"]> {
  switch (type) {
    case "sandbox.lifecycle.killed": {
      const reason = KILL_REASONS.find((r) => r === data.reason) ?? "request";
      return { kill_reason: reason };
    }
    case "sandbox.lifecycle.updated": {
      const endAt = text(data.endAt);
      return endAt ? { set_timeout: endAt } : {};
    }
    case "sandbox.lifecycle.timed_out":
      return { timeout_action: data.action === "pause" ? "pause" : "kill" };
    case "sandbox.lifecycle.error":
      return { reason: text(data.reason) ?? sandbox?.reason ?? "the sandbox stopped working" };
    case "sandbox.lifecycle.lost": {
      const node = text(data.nodeId);
      const what = data.restarting === true ? "is restarting" : "stopped answering";
      return { reason: text(data.reason) ?? (node ? `its node ${node} ${what}` : `its node ${what}`) };
    }
    default:
      return {};
  }
}

/**
 * Lifecycle events as the wire shows them, in the order given: with the sandbox's template,
 * build and metadata, the run they belong to (`sandboxExecutionId`: the id of the create or
 * resume that began it) and, on `killed` and `paused`, that run's resources and length.
 * Events that are not lifecycle events on the wire are left out (a pause made deeper among them).
 */
export async function presentEvents(
  store: Pick<Store, "events" | "sandboxes">,
  events: PlatformEvent[],
): Promise<SandboxEventPayload[]> {
  const sandboxes = new Map<string, Sandbox | undefined>();
  const out: SandboxEventPayload[] = [];
  for (const event of events) {
    const type = wireTypeOf(event.type);
    if (!type || !event.sandboxId || !event.teamId) continue;
    if (!sandboxes.has(event.sandboxId))
      sandboxes.set(event.sandboxId, await store.sandboxes.get(event.sandboxId));
    const sandbox = sandboxes.get(event.sandboxId);
    // the run this event belongs to, and whether it was still going (a kill while paused ends none)
    const last = RUN_STARTS.includes(event.type)
      ? event
      : await store.events.lastBefore(event.sandboxId, [...RUN_STARTS, ...RUN_ENDS], event.id);
    // a paused sandbox put deeper (frozen to checkpointed or stopped) was paused already
    if (type === "sandbox.lifecycle.paused" && last && PAUSES.includes(last.type)) continue;
    const going = !last || RUN_STARTS.includes(last.type);
    const runStart = going ? last : await store.events.lastBefore(event.sandboxId, RUN_STARTS, last.id);
    const ends = going && (type === "sandbox.lifecycle.killed" || type === "sandbox.lifecycle.paused");
    const startedAt = runStart?.at ?? sandbox?.startedAt;
    out.push({
      version: "v2",
      id: event.id,
      type,
      eventData: {
        sandbox_metadata: sandbox?.metadata ?? {},
        ...(ends && sandbox && startedAt
          ? {
              execution: {
                started_at: startedAt,
                vcpu_count: sandbox.cpuCount,
                memory_mb: sandbox.memoryMB,
                execution_time: Math.max(0, Date.parse(event.at) - Date.parse(startedAt)),
              },
            }
          : {}),
        ...extras(type, event.data, sandbox),
      },
      sandboxBuildId: sandbox?.buildId ?? "",
      sandboxExecutionId: runStart?.id ?? event.sandboxId,
      sandboxId: event.sandboxId,
      sandboxTeamId: event.teamId,
      sandboxTemplateId: sandbox?.templateId ?? "",
      timestamp: event.at,
    });
  }
  return out;
}
