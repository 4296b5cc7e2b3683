import { randomUUID } from "node:crypto";
import http from "node:http";
import https from "node:https";
import { nowIso } from "../lib/ids.js";
import type { Logger } from "../lib/log.js";
import type { SandboxEventType, Webhook, WebhookTarget } from "../model/webhook.js";
import {
  type DestinationGuard,
  describeRefusal,
  pinnedLookup,
  ResolveError,
} from "../network/destination-guard.js";
import { timeMarker } from "../store/events.js";
import type { DeliveryNext, DueDelivery, NewDelivery, PlatformEvent, Store } from "../store/index.js";
import { DEFAULT_RETRY_POLICY, nextAttemptAt, type RetryPolicy } from "./backoff.js";
import { webhookEndpoint } from "./destination.js";
import { presentEvents, recordedTypesOf, wireTypeOf } from "./sandbox-events.js";
import { SIGNATURE_VERSION, signPayload } from "./signature.js";

export interface WebhookDispatcherOptions {
  store: Store;
  log: Logger;
  /**
   * Events are matched to webhooks once they are this old: an event's id is taken before its
   * row commits, so one may land behind a newer one (a slow transaction, another node's
   * clock); the cursor passes an id only this long after its time.
   */
  settleMs?: number;
  /** How often the events and the due deliveries are looked at. */
  pollMs?: number;
  /** How long one request may take, answer included. */
  timeoutMs?: number;
  /** Requests under way at once, in all. */
  concurrency?: number;
  /** Requests under way at once to one webhook: a slow endpoint holds no more than these. */
  perWebhook?: number;
  retry?: Partial<RetryPolicy>;
  /** How long the delivery log keeps an attempt. */
  retentionMs?: number;
  /** On stop, how long requests under way may finish before they are cut (and sent again by the next start). */
  stopGraceMs?: number;
  /** Events matched per transaction. */
  batch?: number;
  /**
   * Decides where a delivery may go: each attempt resolves the URL's host again and connects
   * only to the addresses this let through (a name that now resolves to an internal address,
   * DNS rebinding, is refused).
   */
  guard: DestinationGuard;
  /** In [0, 1): spreads retries (jitter). */
  random?: () => number;
}

const PRUNE_EVERY_MS = 10 * 60_000;
/** What the delivery log says of a destination the guard refused (and which is not tried again). */
export const DESTINATION_NOT_ALLOWED = "destination not allowed";

/** What one attempt got: the endpoint's status, or why there is none. */
interface Sent {
  statusCode: number | null;
  error: string | null;
  deliveryId?: string;
  /** The guard refused the destination: no later attempt would be allowed either. */
  refused?: boolean;
}

/**
 * One POST to `url`, connected to one of `addresses` (checked by the guard) whatever its host
 * resolves to now, with the URL's host as Host and TLS server name; resolves the status as soon
 * as it comes (the body is not read). Redirects are not followed: a 3xx is the endpoint's answer.
 */
function postTo(
  url: string,
  addresses: readonly string[],
  o: { headers: Record<string, string>; body: string; signal: AbortSignal },
): Promise<number> {
  return new Promise((resolve, reject) => {
    const client = url.startsWith("https:") ? https : http;
    const req = client.request(
      url,
      {
        method: "POST",
        headers: { ...o.headers, "Content-Length": String(Buffer.byteLength(o.body)) },
        lookup: pinnedLookup(addresses),
        // a connection of its own: a pooled one could have been made for another answer of the name
        agent: false,
        signal: o.signal,
      },
      (res) => {
        resolve(res.statusCode ?? 0);
        res.destroy();
      },
    );
    req.on("error", reject);
    req.end(o.body);
  });
}

/** What went wrong with a request that was allowed: a name that did not resolve, or the socket's error code. */
function describeFailure(err: unknown): string {
  if (err instanceof ResolveError) return `could not reach the endpoint: ${err.code}`;
  const e = (typeof err === "object" && err !== null ? err : {}) as { code?: unknown; message?: unknown };
  if (typeof e.code === "string") return `could not reach the endpoint: ${e.code}`;
  return typeof e.message === "string" ? `could not reach the endpoint: ${e.message}` : String(err);
}
/** A claim outlives its request's timeout by this, so a live sender always settles first. */
const CLAIM_MARGIN_MS = 30_000;

/** Another dispatcher (a node of the same cluster) moved the cursor first: this one's matching is rolled back. */
class CursorMoved extends Error {}

interface InFlight {
  webhookId: string;
  abort: AbortController;
  done: Promise<void>;
}

/**
 * Sends teams' webhooks their sandboxes' lifecycle events. The persisted `events` are the
 * outbox: a cursor kept in the store says how far they were matched to the webhooks, and
 * each match becomes a delivery row in the same transaction as the cursor's move, so a
 * restart neither loses nor repeats one. Deliveries are claimed for one attempt at a time,
 * sent signed (E2B's headers and signature), logged, and retried with exponential backoff
 * until a 2xx, too many attempts or too old. Nothing here is awaited by a request: sandbox
 * operations only record their events. A request in flight when the process dies is sent
 * again once its claim lapses: delivery is at least once, the body's `id` (the event's)
 * tells repeats apart.
 */
export class WebhookDispatcher {
  private readonly store: Store;
  private readonly log: Logger;
  private readonly settleMs: number;
  private readonly pollMs: number;
  private readonly timeoutMs: number;
  private readonly concurrency: number;
  private readonly perWebhook: number;
  private readonly policy: RetryPolicy;
  private readonly retentionMs: number;
  private readonly stopGraceMs: number;
  private readonly batch: number;
  private readonly guard: DestinationGuard;
  private readonly random: () => number;
  private readonly inFlight = new Map<string, InFlight>();
  private timer: NodeJS.Timeout | undefined;
  private ticking: Promise<void> | undefined;
  private again = false;
  private stopped = false;
  private prunedAt = 0;

  constructor(o: WebhookDispatcherOptions) {
    this.store = o.store;
    this.log = o.log;
    this.settleMs = o.settleMs ?? 1000;
    this.pollMs = o.pollMs ?? 250;
    this.timeoutMs = o.timeoutMs ?? 10_000;
    this.concurrency = o.concurrency ?? 32;
    this.perWebhook = o.perWebhook ?? 4;
    this.policy = { ...DEFAULT_RETRY_POLICY, ...o.retry };
    this.retentionMs = o.retentionMs ?? 7 * 24 * 3600_000;
    this.stopGraceMs = o.stopGraceMs ?? 2000;
    this.batch = o.batch ?? 200;
    this.guard = o.guard;
    this.random = o.random ?? Math.random;
  }

  start(): void {
    this.stopped = false;
    this.timer ??= setInterval(() => this.kick(), this.pollMs);
    this.timer.unref();
    this.kick();
  }

  /**
   * Stops matching and sending. Requests under way get `stopGraceMs` to finish; those cut
   * then are given back (due at once for the next start, their attempt not counted).
   */
  async stop(): Promise<void> {
    this.stopped = true;
    clearInterval(this.timer);
    this.timer = undefined;
    await this.ticking;
    const under = [...this.inFlight.values()];
    let graceTimer: NodeJS.Timeout | undefined;
    await Promise.race([
      Promise.all(under.map((f) => f.done)),
      new Promise((resolve) => {
        graceTimer = setTimeout(resolve, this.stopGraceMs);
      }),
    ]);
    clearTimeout(graceTimer);
    for (const f of this.inFlight.values()) f.abort.abort();
    await Promise.all([...this.inFlight.values()].map((f) => f.done));
  }

  /** Looks at events and due deliveries now (and again once the look under way ends). */
  kick(): void {
    if (this.stopped) return;
    if (this.ticking) {
      this.again = true;
      return;
    }
    this.ticking = this.tick().finally(() => {
      this.ticking = undefined;
    });
  }

  private async tick(): Promise<void> {
    do {
      this.again = false;
      try {
        while (!this.stopped && (await this.fanOut()));
        await this.sendDue();
        await this.prune();
      } catch (err) {
        if (!(err instanceof CursorMoved))
          this.log.warn({ err }, "webhook dispatch failed; trying again shortly");
      }
    } while (this.again && !this.stopped);
  }

  /**
   * Matches the events recorded since the cursor (and settled) to the enabled webhooks of
   * their teams that want their type and existed when they happened, as deliveries, and moves
   * the cursor past them: one transaction. Resolves whether a full batch was read (more wait).
   */
  private fanOut(): Promise<boolean> {
    const bound = timeMarker(Date.now() - this.settleMs);
    return this.store.transaction(async (s) => {
      const cursor = await s.webhookDeliveries.cursor(async () => {
        const oldest = await s.webhooks.oldestCreatedAt();
        return timeMarker(Math.min(Date.now() - this.settleMs, oldest ? Date.parse(oldest) : Infinity));
      });
      if (cursor >= bound) return false;
      const hooks = await s.webhooks.enabled();
      const types = recordedTypesOf([...new Set(hooks.flatMap((h) => h.events))]);
      const events = types.length > 0 ? await s.events.between(cursor, bound, types, this.batch) : [];
      const full = events.length === this.batch;
      // past the last event read, or past every event settled: the cursor moves only over events
      const to = full ? events.at(-1)!.id : await s.events.lastIdBetween(cursor, bound);
      if (to === undefined) return false;
      await s.webhookDeliveries.add(await this.match(s, events, hooks));
      if (!(await s.webhookDeliveries.moveCursor(cursor, to))) throw new CursorMoved();
      return full;
    });
  }

  private async match(s: Store, events: PlatformEvent[], hooks: Webhook[]): Promise<NewDelivery[]> {
    const wants = (h: Webhook, type: SandboxEventType, at: string) =>
      h.events.includes(type) && at >= h.createdAt;
    // only the events some webhook wants are looked up and shaped
    const wanted = events.filter((e) => {
      const type = wireTypeOf(e.type);
      return type !== undefined && hooks.some((h) => h.teamId === e.teamId && wants(h, type, e.at));
    });
    return (await presentEvents(s, wanted)).flatMap((p) => {
      const body = JSON.stringify(p);
      return hooks
        .filter((h) => h.teamId === p.sandboxTeamId && wants(h, p.type, p.timestamp))
        .map((h) => ({ webhookId: h.id, eventId: p.id, eventType: p.type, payload: body }));
    });
  }

  /** Claims due deliveries up to the free places (and each webhook's share) and sends them, not waiting. */
  private async sendDue(): Promise<void> {
    const free = this.concurrency - this.inFlight.size;
    if (free <= 0 || this.stopped) return;
    const due = await this.store.webhookDeliveries.due(nowIso(), Math.min(500, free * 4));
    for (const d of due) {
      if (this.stopped || this.inFlight.size >= this.concurrency) break;
      const ofWebhook = [...this.inFlight.values()].filter((f) => f.webhookId === d.webhookId).length;
      if (ofWebhook >= this.perWebhook) continue;
      const until = nowIso(new Date(Date.now() + this.timeoutMs + CLAIM_MARGIN_MS));
      if (!(await this.store.webhookDeliveries.claim(d, until))) continue;
      const abort = new AbortController();
      const done = this.attempt(d, abort.signal)
        .catch((err: unknown) =>
          this.log.warn({ err, webhookId: d.webhookId, eventId: d.eventId }, "webhook delivery not recorded"),
        )
        .finally(() => {
          this.inFlight.delete(d.id);
          this.kick();
        });
      this.inFlight.set(d.id, { webhookId: d.webhookId, abort, done });
    }
  }

  /** One attempt at a claimed delivery: sent, logged, and what follows decided. */
  private async attempt(d: DueDelivery, stopping: AbortSignal): Promise<void> {
    const target = await this.store.webhooks.target(d.webhookId);
    // deleted meanwhile, with its deliveries
    if (!target) return;
    const attempt = d.attempts + 1;
    const startedAt = Date.now();
    const sent: Sent | "stopped" = target.enabled
      ? await this.post(target, d, stopping)
      : { statusCode: null, error: "the webhook is disabled: its deliveries under way are dropped" };
    if (sent === "stopped") return this.store.webhookDeliveries.release(d);
    const finishedAt = Date.now();
    const delivered = sent.statusCode !== null && sent.statusCode >= 200 && sent.statusCode < 300;
    const retryAt =
      delivered || !target.enabled || sent.refused
        ? undefined
        : nextAttemptAt(this.policy, attempt, Date.parse(d.createdAt), finishedAt, this.random());
    const next: DeliveryNext = delivered
      ? { state: "delivered" }
      : retryAt === undefined
        ? { state: "failed" }
        : { state: "pending", nextAttemptAt: nowIso(new Date(retryAt)) };
    const outcome = next.state === "pending" ? "retrying" : next.state;
    await this.store.webhookDeliveries.settle(
      {
        id: sent.deliveryId ?? randomUUID(),
        deliveryId: d.id,
        webhookId: d.webhookId,
        eventId: d.eventId,
        eventType: d.eventType,
        attempt,
        at: nowIso(new Date(startedAt)),
        statusCode: sent.statusCode,
        error: sent.error,
        durationMs: finishedAt - startedAt,
        outcome,
      },
      next,
    );
    if (outcome === "failed")
      this.log.warn(
        {
          webhookId: d.webhookId,
          eventId: d.eventId,
          attempts: attempt,
          statusCode: sent.statusCode,
          error: sent.error,
        },
        "webhook delivery given up",
      );
  }

  /** POSTs the delivery's body, signed, where the guard allows; "stopped" when the platform's stop cut it. */
  private async post(
    target: WebhookTarget,
    d: DueDelivery,
    stopping: AbortSignal,
  ): Promise<Sent | "stopped"> {
    const deliveryId = randomUUID();
    const timeout = AbortSignal.timeout(this.timeoutMs);
    try {
      const { host, port } = webhookEndpoint(target.url);
      const check = await this.guard.check(host, port);
      if (!check.allowed) {
        // the operator's log says why; the team's delivery log has the same words whatever lies
        // behind, so that it is no map of the host's networks
        this.log.info(
          { webhookId: d.webhookId, refused: describeRefusal(host, check) },
          "webhook destination refused",
        );
        return { statusCode: null, error: DESTINATION_NOT_ALLOWED, deliveryId, refused: true };
      }
      const statusCode = await postTo(target.url, check.addresses, {
        headers: {
          "Content-Type": "application/json",
          "User-Agent": "x-sandbox-platform-webhooks",
          "e2b-webhook-id": d.webhookId,
          "e2b-delivery-id": deliveryId,
          "e2b-signature-version": SIGNATURE_VERSION,
          "e2b-signature": signPayload(target.signatureSecret, d.payload),
        },
        body: d.payload,
        signal: AbortSignal.any([stopping, timeout]),
      });
      return { statusCode, error: null, deliveryId };
    } catch (err) {
      if (stopping.aborted) return "stopped";
      if (timeout.aborted)
        return { statusCode: null, error: `no answer within ${this.timeoutMs / 1000}s`, deliveryId };
      return { statusCode: null, error: describeFailure(err), deliveryId };
    }
  }

  /** Forgets the delivery log's old attempts, now and then. */
  private async prune(): Promise<void> {
    if (Date.now() - this.prunedAt < PRUNE_EVERY_MS) return;
    this.prunedAt = Date.now();
    await this.store.webhookDeliveries.prune(nowIso(new Date(Date.now() - this.retentionMs)));
  }
}
