/**
 * Creates that are safe to retry (`Idempotency-Key`, a platform extension: E2B's API has none,
 * and the e2b client sends it only when given it in `apiHeaders`).
 *
 * A key binds, for a day, to its team, its request (the operation and the body, hashed) and the
 * create ticket of the attempt that holds it (store/idempotency-keys.ts). The ticket is the
 * one a cluster's api sent the create with, or under `x serve` one of its own: it is claimed
 * with the sandbox's id before the sandbox's first record and confirmed once it runs
 * (store/create-tickets.ts), so what became of an attempt is always known from its ticket,
 * whichever process asks. Of several requests with one key:
 *
 * - exactly one claims the key and makes the sandbox; when it fails (any error answer) it lets
 *   the key go, and a retry (or a request waiting on it) makes its own attempt: a key binds
 *   only to a sandbox made;
 * - the others wait, then answer as the first did (201, the same sandbox and tokens): polling
 *   the key and its ticket (the holder may be another process, on another node);
 * - a holder that stops renewing its lease (it died) is taken for gone: its ticket is called
 *   off (its create then cannot finish, and what it began is ended) unless it had finished,
 *   in which case its sandbox is the key's;
 * - a different request with a used key is refused (422), before anything is done.
 */
import { createHash } from "node:crypto";
import type { Logger } from "../lib/log.js";
import { conflict, reused } from "../model/errors.js";
import type { Team } from "../model/team.js";
import type { IdempotencyRecord, Store } from "../store/index.js";

/** The holder renews its lease this often (a third of it). */
const LEASE_MS = 15_000;
/** A waiter stops waiting after this, below the api's own wait for a node's answer (300 s). */
const MAX_WAIT_MS = 240_000;
const FIRST_POLL_MS = 25;
const MAX_POLL_MS = 500;

export interface IdempotentCreatesOptions {
  store: Store;
  log: Logger;
  /** Overrides (tests): the holder's lease, and how long a waiter waits. */
  leaseMs?: number;
  maxWaitMs?: number;
}

export interface OnceRequest<T> {
  team: Team;
  key: string;
  requestHash: string;
  /** The ticket a cluster's api sent the create with; without one a ticket of its own is issued. */
  ticket?: string;
  /** Makes the sandbox, its create holding `ticket`; the sandbox made and the answer. */
  attempt(ticket: string): Promise<{ sandboxId: string; answer: T }>;
  /** The answer for the sandbox the key made. */
  replay(sandboxId: string): Promise<T>;
  /** Ends, in the catalog, what an attempt taken for gone had begun when it was called off. */
  endCalledOff(sandboxId: string): Promise<unknown>;
}

/** The hash a key binds to: the operation and its body, whatever the order of the body's fields. */
export function requestHashOf(operation: string, body: unknown): string {
  return createHash("sha256").update(operation).update("\n").update(canonicalJson(body)).digest("hex");
}

function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(",")}]`;
  if (value && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A key as messages show it: the caller's own, cut short when long. */
const shown = (key: string) => (key.length > 64 ? `${key.slice(0, 61)}...` : key);

export class IdempotentCreates {
  private readonly leaseMs: number;
  private readonly maxWaitMs: number;

  constructor(private readonly o: IdempotentCreatesOptions) {
    this.leaseMs = o.leaseMs ?? LEASE_MS;
    this.maxWaitMs = o.maxWaitMs ?? MAX_WAIT_MS;
  }

  /** The create's answer: made now under the key, or the one the key made already (see above). */
  async once<T>(r: OnceRequest<T>): Promise<T> {
    const { store } = this.o;
    const ticket = r.ticket ?? (await store.createTickets.issue(r.team.id, store.nodeId));
    try {
      return await this.claimOrWait(r, ticket);
    } finally {
      // a ticket of its own: done with once answered (an api settles the tickets it sent)
      if (!r.ticket)
        await store.createTickets
          .settle(ticket)
          .catch((err: unknown) => this.o.log.warn({ err }, "ticket not settled"));
    }
  }

  private async claimOrWait<T>(r: OnceRequest<T>, ticket: string): Promise<T> {
    const keys = this.o.store.idempotencyKeys;
    const deadline = Date.now() + this.maxWaitMs;
    for (;;) {
      const claim = await keys.claim({
        teamId: r.team.id,
        key: r.key,
        requestHash: r.requestHash,
        ticket,
        leaseMs: this.leaseMs,
      });
      if (claim.kind === "claimed") return this.hold(r, ticket);
      const outcome = await this.waitOn(r, claim.record, ticket, deadline);
      if (outcome.kind === "made") {
        this.o.log.info(
          { teamId: r.team.id, sandboxId: outcome.sandboxId },
          "create answered with the sandbox its Idempotency-Key made",
        );
        return r.replay(outcome.sandboxId);
      }
      if (outcome.kind === "taken") return this.hold(r, ticket);
      // the key went free: claim it again
    }
  }

  /** Makes the sandbox holding the key; lets the key go when that fails. */
  private async hold<T>(r: OnceRequest<T>, ticket: string): Promise<T> {
    const keys = this.o.store.idempotencyKeys;
    const renew = setInterval(() => {
      keys
        .renew(r.team.id, r.key, ticket, this.leaseMs)
        .catch((err: unknown) => this.o.log.warn({ err }, "Idempotency-Key lease not renewed"));
    }, this.leaseMs / 3);
    renew.unref();
    let made: { sandboxId: string; answer: T };
    try {
      made = await r.attempt(ticket);
    } catch (err) {
      await keys
        .release(r.team.id, r.key, ticket)
        .catch((e: unknown) => this.o.log.warn({ err: e }, "Idempotency-Key not released"));
      throw err;
    } finally {
      clearInterval(renew);
    }
    // false only when a waiter found the ticket finished and recorded the same sandbox first;
    // when it fails, the finished ticket still tells waiters and its settling which sandbox it is
    await keys
      .finish(r.team.id, r.key, ticket, made.sandboxId)
      .catch((err: unknown) => this.o.log.warn({ err }, "Idempotency-Key's sandbox not recorded"));
    return made.answer;
  }

  /**
   * Waits while another attempt holds the key: until it made a sandbox, or the key is free
   * again (`free`), or this caller took it over (`taken`).
   */
  private async waitOn<T>(
    r: OnceRequest<T>,
    first: IdempotencyRecord,
    ticket: string,
    deadline: number,
  ): Promise<{ kind: "made"; sandboxId: string } | { kind: "free" } | { kind: "taken" }> {
    const { store } = this.o;
    const keys = store.idempotencyKeys;
    let record: IdempotencyRecord | undefined = first;
    for (let pause = FIRST_POLL_MS; ; pause = Math.min(pause * 2, MAX_POLL_MS)) {
      if (!record) return { kind: "free" };
      if (record.requestHash !== r.requestHash) throw reusedFor(r.key);
      if (record.sandboxId) return { kind: "made", sandboxId: record.sandboxId };
      const held = await store.createTickets.get(record.ticket);
      if (held?.done && held.sandboxId) {
        // finished, and its holder has not recorded it yet (or never will: it died)
        await keys.finish(r.team.id, r.key, record.ticket, held.sandboxId);
        return { kind: "made", sandboxId: held.sandboxId };
      }
      const takeOver = () => keys.takeOver(r.team.id, r.key, record!.ticket, ticket, this.leaseMs);
      // its create is over without a sandbox (it failed, or was called off): the key is this caller's
      if (!held && (await takeOver())) return { kind: "taken" };
      if (held && Date.parse(record.leaseUntil) < Date.now()) {
        // its holder stopped renewing: called off unless it finished meanwhile
        const found = await store.createTickets.abandon(record.ticket);
        if (!found.abandoned && found.sandboxId) {
          await keys.finish(r.team.id, r.key, record.ticket, found.sandboxId);
          return { kind: "made", sandboxId: found.sandboxId };
        }
        if (found.sandboxId) await r.endCalledOff(found.sandboxId);
        this.o.log.warn(
          { teamId: r.team.id, ticket: record.ticket, sandboxId: found.sandboxId },
          "the create holding an Idempotency-Key stopped answering: called off, and made again",
        );
        // abandon let the key go with the ticket: claimed again, as a fresh attempt
        return { kind: "free" };
      }
      if (Date.now() > deadline)
        throw conflict(
          `a create with Idempotency-Key '${shown(r.key)}' is still being made by an earlier request: retry with the same key to get its sandbox`,
        );
      await sleep(pause);
      record = await keys.get(r.team.id, r.key);
    }
  }
}

function reusedFor(key: string) {
  return reused(
    `Idempotency-Key '${shown(key)}' was used by your team within the last 24 hours for another request (a different body or endpoint): send that request again to get its sandbox, or use a new key for a new sandbox`,
  );
}
