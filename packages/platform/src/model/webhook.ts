import { invalid } from "./errors.js";

/**
 * The lifecycle events a webhook can be sent (E2B's names): E2B's five, then this platform's
 * own in the same family. `timed_out` comes before the `killed` (with `kill_reason: timeout`)
 * or `paused` that a timeout leads to; `error` is a sandbox that failed to start or stopped
 * working by itself; `lost`, one whose node stopped answering.
 */
export const SANDBOX_EVENT_TYPES = [
  "sandbox.lifecycle.created",
  "sandbox.lifecycle.killed",
  "sandbox.lifecycle.updated",
  "sandbox.lifecycle.paused",
  "sandbox.lifecycle.resumed",
  "sandbox.lifecycle.timed_out",
  "sandbox.lifecycle.error",
  "sandbox.lifecycle.lost",
] as const;

export type SandboxEventType = (typeof SANDBOX_EVENT_TYPES)[number];

/** Why a sandbox was killed (recorded with its `sandbox.killed` event). */
export type KillReason = "request" | "timeout" | "shutdown";

/** A team's webhook as everyone but its sender sees it: never with its secret. */
export interface Webhook {
  id: string;
  teamId: string;
  name: string;
  url: string;
  enabled: boolean;
  events: SandboxEventType[];
  createdAt: string;
  updatedAt: string;
}

/** Where and how a delivery is sent: the webhook's URL and secret as they are at the attempt. */
export interface WebhookTarget {
  url: string;
  signatureSecret: string;
  /** A disabled webhook is sent nothing, its deliveries under way included. */
  enabled: boolean;
}

export type DeliveryOutcome = "delivered" | "retrying" | "failed";

/** One attempt to deliver an event to a webhook: a line of its delivery log. */
export interface WebhookAttempt {
  /** Sent as `e2b-delivery-id`: new for every attempt. */
  id: string;
  deliveryId: string;
  webhookId: string;
  eventId: string;
  eventType: SandboxEventType;
  /** 1 for the first attempt at the event. */
  attempt: number;
  at: string;
  statusCode: number | null;
  error: string | null;
  durationMs: number;
  outcome: DeliveryOutcome;
}

/** Webhooks one team may have. */
export const MAX_WEBHOOKS_PER_TEAM = 20;

/** The URL a webhook is sent to: absolute http(s), with a host, no credentials in it. */
export function checkWebhookUrl(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw invalid(`url: '${url}' is not an absolute URL (e.g. https://example.com/hooks/e2b)`);
  }
  if (parsed.protocol !== "http:" && parsed.protocol !== "https:")
    throw invalid(`url: must be an http:// or https:// URL, not ${parsed.protocol}//`);
  if (!parsed.hostname) throw invalid(`url: '${url}' names no host`);
  if (parsed.username || parsed.password)
    throw invalid("url: must not carry a user name or password (the signature authenticates deliveries)");
  return url;
}

/** A webhook's name: not blank. */
export function checkWebhookName(name: string): string {
  if (name.trim() === "") throw invalid("name: must not be blank");
  return name;
}

/** Each event type once, in the order given. */
export function distinctEvents(events: readonly SandboxEventType[]): SandboxEventType[] {
  return [...new Set(events)];
}
