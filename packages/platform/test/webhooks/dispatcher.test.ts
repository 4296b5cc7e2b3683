/**
 * The webhook dispatcher against a real store (SQLite and PostgreSQL) and real HTTP endpoints
 * on 127.0.0.1: events recorded as the orchestrator records them reach each subscribed webhook
 * once, signed as E2B signs them; failures are retried with backoff and logged; a hung
 * endpoint holds only its own deliveries; a restart (a new store and dispatcher on the same
 * database) neither loses nor repeats an event; two dispatchers on one database (nodes of a
 * cluster) send each event once; a destination the guard refuses (a name that resolves to
 * loopback when the delivery is made) is sent nothing, and the attempt says only that it was not
 * allowed. Short delays stand in for the defaults so the suite is fast.
 */
import { newSandboxId } from "../../src/lib/ids.js";
import { silentLogger } from "../../src/lib/log.js";
import { SANDBOX_EVENT_TYPES, type Webhook } from "../../src/model/webhook.js";
import { DestinationGuard, destinationRules } from "../../src/network/destination-guard.js";
import { openStore, type Store } from "../../src/store/index.js";
import { sandboxRecord } from "../../src/store/testing/sandbox-record.js";
import {
  DESTINATION_NOT_ALLOWED,
  WebhookDispatcher,
  type WebhookDispatcherOptions,
} from "../../src/webhooks/dispatcher.js";
import { DIALECTS, freshStore, type TestStore } from "../helpers/stores.js";
import {
  type Answer,
  deliveriesSettled,
  startReceiver,
  type WebhookReceiver,
  waitUntil,
} from "../helpers/webhook-receiver.js";

const SECRET = "s3cret-for-signing";
const ALL = [...SANDBOX_EVENT_TYPES];

/** What these tests' receivers need: 127.0.0.1 allowed, as an operator would with --allow-private-webhooks. */
const LOOPBACK_ALLOWED = new DestinationGuard({ allow: destinationRules(["127.0.0.1"], "test") });

const FAST: Partial<WebhookDispatcherOptions> = {
  settleMs: 30,
  pollMs: 20,
  timeoutMs: 1000,
  stopGraceMs: 200,
  retry: { baseDelayMs: 40, maxDelayMs: 200, maxAttempts: 4, jitter: 0 },
};

describe.each(DIALECTS)("webhook dispatcher on %s", (dialect) => {
  let t: TestStore;
  let store: Store;
  let teamId: string;
  let otherTeamId: string;
  let templateId: string;
  const dispatchers: WebhookDispatcher[] = [];
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    t = await freshStore(dialect);
    store = t.store;
    teamId = (await store.teams.createTeam("Hooks", "hooks")).id;
    otherTeamId = (await store.teams.createTeam("Others", "others")).id;
    templateId = (await store.templates.createTemplate(teamId)).id;
  });

  afterAll(async () => {
    await t?.cleanup();
  });

  afterEach(async () => {
    for (const d of dispatchers.splice(0)) await d.stop();
    for (const r of receivers.splice(0)) await r.close();
    for (const w of await store.webhooks.list(teamId)) await store.webhooks.delete(teamId, w.id);
    for (const w of await store.webhooks.list(otherTeamId)) await store.webhooks.delete(otherTeamId, w.id);
  });

  function dispatcher(on: Store = store, options: Partial<WebhookDispatcherOptions> = {}): WebhookDispatcher {
    const d = new WebhookDispatcher({
      store: on,
      log: silentLogger,
      ...FAST,
      ...options,
      guard: options.guard ?? LOOPBACK_ALLOWED,
    });
    dispatchers.push(d);
    d.start();
    return d;
  }

  async function receiver(answer?: Answer): Promise<WebhookReceiver> {
    const r = await startReceiver(SECRET, answer);
    receivers.push(r);
    return r;
  }

  async function webhook(url: string, events = ALL, team = teamId): Promise<Webhook> {
    const w = await store.webhooks.insert(
      { teamId: team, name: "test", url, enabled: true, events, signatureSecret: SECRET },
      20,
    );
    if (!w) throw new Error("webhook limit reached in a test");
    return w;
  }

  async function sandbox(metadata: Record<string, string> = {}, team = teamId): Promise<string> {
    const id = newSandboxId();
    await store.sandboxes.insert(
      sandboxRecord({
        id,
        teamId: team,
        templateId,
        buildId: "build-1",
        metadata,
        cpuCount: 2,
        memoryMB: 1024,
      }),
    );
    return id;
  }

  const record = (
    type: string,
    sandboxId: string,
    data: Record<string, unknown> = {},
    team = teamId,
    on = store,
  ) => on.events.record(type, { teamId: team, sandboxId, data });

  const quiet = (on: Store = store) => deliveriesSettled(on);
  const rowsOf = (table: "webhook_deliveries" | "webhook_attempts", webhookId: string) =>
    store.db.kysely.selectFrom(table).select("id").where("webhook_id", "=", webhookId).execute();

  it("sends each subscribed event once, signed, with E2B's headers and payload", async () => {
    const r = await receiver();
    const early = await sandbox();
    // before the webhook exists: never sent
    await record("sandbox.created", early);
    await new Promise((resolve) => setTimeout(resolve, 5));
    const hook = await webhook(r.url, [
      "sandbox.lifecycle.created",
      "sandbox.lifecycle.paused",
      "sandbox.lifecycle.killed",
    ]);
    dispatcher();
    const id = await sandbox({ owner: "ci", run: "7" });
    await record("sandbox.created", id, { templateId, runtime: "runc" });
    await record("sandbox.updated", id, { endAt: "2030-01-01T00:00:00.000Z" }); // not subscribed
    await record("sandbox.paused", id, { kind: "frozen" });
    await record("sandbox.resumed", id); // not subscribed
    await record("sandbox.snapshot", id); // not a lifecycle event
    await record("sandbox.killed", id, { reason: "request" });
    await quiet();

    expect(r.received.map((x) => x.body.type)).toEqual(
      expect.arrayContaining([
        "sandbox.lifecycle.created",
        "sandbox.lifecycle.paused",
        "sandbox.lifecycle.killed",
      ]),
    );
    expect(r.received).toHaveLength(3);
    expect(new Set(r.eventIds()).size).toBe(3);
    for (const got of r.received) {
      expect(got.signed).toBe(true);
      expect(got.headers["e2b-webhook-id"]).toBe(hook.id);
      expect(got.headers["e2b-signature-version"]).toBe("v1");
      expect(got.headers["content-type"]).toBe("application/json");
      expect(got.body).toMatchObject({
        version: "v2",
        sandboxId: id,
        sandboxTeamId: teamId,
        sandboxTemplateId: templateId,
        sandboxBuildId: "build-1",
        eventData: { sandbox_metadata: { owner: "ci", run: "7" } },
      });
    }
    expect(new Set(r.received.map((x) => x.headers["e2b-delivery-id"])).size).toBe(3);
    const created = r.received.find((x) => x.body.type === "sandbox.lifecycle.created")!.body;
    const killed = r.received.find((x) => x.body.type === "sandbox.lifecycle.killed")!.body;
    const paused = r.received.find((x) => x.body.type === "sandbox.lifecycle.paused")!.body;
    expect(created.sandboxExecutionId).toBe(created.id);
    expect(paused.eventData.execution).toEqual({
      started_at: created.timestamp,
      vcpu_count: 2,
      memory_mb: 1024,
      execution_time: Date.parse(paused.timestamp) - Date.parse(created.timestamp),
    });
    // killed after a resume: its run began at the resume
    expect(killed.eventData.kill_reason).toBe("request");
    expect(killed.sandboxExecutionId).not.toBe(created.id);
    expect(killed.eventData.execution.started_at >= paused.timestamp).toBe(true);

    const log = await store.webhookDeliveries.attempts(hook.id, { limit: 10 });
    expect(log.map((a) => [a.attempt, a.statusCode, a.error, a.outcome])).toEqual([
      [1, 200, null, "delivered"],
      [1, 200, null, "delivered"],
      [1, 200, null, "delivered"],
    ]);
    expect(new Set(log.map((a) => a.id))).toEqual(
      new Set(r.received.map((x) => x.headers["e2b-delivery-id"])),
    );
  });

  it("sends a pause made deeper once, and a kill while paused without a run", async () => {
    const r = await receiver();
    await webhook(r.url);
    dispatcher();
    const id = await sandbox();
    await record("sandbox.created", id);
    await record("sandbox.paused", id, { kind: "frozen" });
    await record("sandbox.paused", id, { kind: "checkpointed" });
    await record("sandbox.killed", id, { reason: "request" });
    await quiet();
    const got = [...r.received].sort((a, b) => (a.body.id < b.body.id ? -1 : 1)).map((x) => x.body);
    expect(got.map((b) => b.type)).toEqual([
      "sandbox.lifecycle.created",
      "sandbox.lifecycle.paused",
      "sandbox.lifecycle.killed",
    ]);
    expect(got[2].eventData.execution).toBeUndefined();
    expect(got[2].sandboxExecutionId).toBe(got[0].id);
  });

  it("retries a failing endpoint with backoff, the same body each time, and logs each attempt", async () => {
    const r = await receiver((n) => (n < 2 ? 500 : 204));
    const hook = await webhook(r.url, ["sandbox.lifecycle.created"]);
    dispatcher();
    await record("sandbox.created", await sandbox());
    await quiet();

    expect(r.received).toHaveLength(3);
    expect(new Set(r.received.map((x) => x.raw)).size).toBe(1);
    expect(new Set(r.received.map((x) => x.headers["e2b-delivery-id"])).size).toBe(3);
    expect(r.received.every((x) => x.signed)).toBe(true);
    const log = (await store.webhookDeliveries.attempts(hook.id, { limit: 10 })).reverse();
    expect(log.map((a) => [a.attempt, a.statusCode, a.outcome])).toEqual([
      [1, 500, "retrying"],
      [2, 500, "retrying"],
      [3, 204, "delivered"],
    ]);
    // 40 ms, then 80 ms between attempts at least (the backoff, without jitter here)
    const gaps = log.slice(1).map((a, i) => Date.parse(a.at) - Date.parse(log[i]!.at) - log[i]!.durationMs);
    expect(gaps[0]).toBeGreaterThanOrEqual(40);
    expect(gaps[1]).toBeGreaterThanOrEqual(80);
  });

  it("gives a delivery up after the last attempt, and an unreachable endpoint's error is logged", async () => {
    const failing = await receiver(() => 503);
    const gone = await receiver();
    await gone.close();
    receivers.splice(receivers.indexOf(gone), 1);
    const a = await webhook(failing.url, ["sandbox.lifecycle.created"]);
    const b = await webhook(gone.url, ["sandbox.lifecycle.created"]);
    dispatcher();
    await record("sandbox.created", await sandbox());
    await quiet();

    expect(failing.received).toHaveLength(4);
    const logA = await store.webhookDeliveries.attempts(a.id, { limit: 10 });
    expect(logA.map((x) => x.outcome)).toEqual(["failed", "retrying", "retrying", "retrying"]);
    const logB = await store.webhookDeliveries.attempts(b.id, { limit: 10 });
    expect(logB).toHaveLength(4);
    expect(logB[0]).toMatchObject({ statusCode: null, outcome: "failed" });
    expect(logB[0]!.error).toMatch(/could not reach the endpoint: ECONNREFUSED/);
  });

  it("sends nothing where the guard refuses (a name that resolves to loopback now), and logs only that", async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    // created when the name was public, say: each delivery resolves it again
    const named = await webhook(`http://localhost:${port}/hooks/e2b`, ["sandbox.lifecycle.created"]);
    const rebound = await webhook(`http://hooks.rebind.test:${port}/hooks/e2b`, [
      "sandbox.lifecycle.created",
    ]);
    const guard = new DestinationGuard({
      allow: [],
      resolve: async (name) => (name === "hooks.rebind.test" ? ["127.0.0.1"] : []),
    });
    dispatcher(store, { guard });
    await record("sandbox.created", await sandbox());
    await quiet();
    expect(r.received).toHaveLength(0);
    for (const hook of [named, rebound]) {
      const log = await store.webhookDeliveries.attempts(hook.id, { limit: 10 });
      // refused once and given up: no retry would be allowed either, and no internal answer shows
      expect(log.map((a) => [a.attempt, a.statusCode, a.error, a.outcome])).toEqual([
        [1, null, DESTINATION_NOT_ALLOWED, "failed"],
      ]);
    }
  });

  it("connects to the address it checked, with the URL's name as Host", async () => {
    const r = await receiver();
    const port = new URL(r.url).port;
    // a name only the guard's resolver knows: delivered, so the connection went where it was checked
    const hook = await webhook(`http://hooks.pinned.test:${port}/hooks/e2b`, ["sandbox.lifecycle.created"]);
    const guard = new DestinationGuard({
      allow: destinationRules(["hooks.pinned.test"], "test"),
      resolve: async () => ["127.0.0.1"],
    });
    dispatcher(store, { guard });
    await record("sandbox.created", await sandbox());
    await quiet();
    expect(r.received.map((x) => x.headers.host)).toEqual([`hooks.pinned.test:${port}`]);
    const log = await store.webhookDeliveries.attempts(hook.id, { limit: 10 });
    expect(log.map((a) => a.outcome)).toEqual(["delivered"]);
  });

  it("a hung endpoint holds only its own deliveries; the others go on", async () => {
    const hung = await receiver(() => "hang");
    const fine = await receiver();
    const slow = await webhook(hung.url);
    await webhook(fine.url);
    dispatcher(store, { timeoutMs: 60_000, perWebhook: 2 });
    const ids: string[] = [];
    for (let i = 0; i < 6; i++) {
      const id = await sandbox();
      ids.push(id);
      await record("sandbox.created", id);
    }
    await waitUntil("the healthy endpoint has every event", () => fine.received.length === 6);
    // the hung one has at most its share open, and nothing was settled for it
    expect(hung.open()).toBe(2);
    expect(hung.received).toHaveLength(2);
    expect(await store.webhookDeliveries.attempts(slow.id, { limit: 10 })).toEqual([]);
    expect(fine.received.map((x) => x.body.sandboxId).sort()).toEqual([...ids].sort());
  });

  it("an endpoint that does not answer in time is logged as such and retried", async () => {
    const r = await receiver((n) => (n === 0 ? "hang" : 200));
    const hook = await webhook(r.url, ["sandbox.lifecycle.created"]);
    dispatcher(store, { timeoutMs: 150 });
    await record("sandbox.created", await sandbox());
    await quiet();
    const log = (await store.webhookDeliveries.attempts(hook.id, { limit: 10 })).reverse();
    expect(log.map((a) => [a.statusCode, a.error, a.outcome])).toEqual([
      [null, "no answer within 0.15s", "retrying"],
      [200, null, "delivered"],
    ]);
  });

  it("never sends a team's events to another team's webhooks", async () => {
    const mine = await receiver();
    const theirs = await receiver();
    await webhook(mine.url);
    await webhook(theirs.url, ALL, otherTeamId);
    dispatcher();
    const id = await sandbox();
    await record("sandbox.created", id);
    await record("sandbox.killed", id, { reason: "timeout" });
    const other = await sandbox({}, otherTeamId);
    await record("sandbox.created", other, {}, otherTeamId);
    await quiet();
    expect(mine.received.map((x) => x.body.sandboxId)).toEqual([id, id]);
    expect(theirs.received.map((x) => x.body.sandboxId)).toEqual([other]);
    expect(theirs.received[0]!.body.sandboxTeamId).toBe(otherTeamId);
  });

  it("sends a disabled webhook nothing that happens while it is disabled", async () => {
    const r = await receiver();
    const hook = await webhook(r.url, ["sandbox.lifecycle.created"]);
    dispatcher();
    await store.webhooks.update(teamId, hook.id, { enabled: false });
    const off = await sandbox();
    await record("sandbox.created", off);
    await quiet();
    await store.webhooks.update(teamId, hook.id, { enabled: true });
    const on = await sandbox();
    await record("sandbox.created", on);
    await quiet();
    expect(r.received.map((x) => x.body.sandboxId)).toEqual([on]);
  });

  it("through a restart, neither loses nor repeats an event", async () => {
    const r = await receiver();
    await webhook(r.url);
    const first = dispatcher();
    const id = await sandbox();
    await record("sandbox.created", id);
    await record("sandbox.paused", id);
    await quiet();
    await first.stop();
    // what happens while no dispatcher runs (the platform's own shutdown kills, say)
    await record("sandbox.resumed", id);
    await record("sandbox.killed", id, { reason: "shutdown" });

    const reopened = await openStore(t.options);
    try {
      dispatcher(reopened);
      await record("sandbox.created", await sandbox(), {}, teamId, reopened);
      await quiet(reopened);
    } finally {
      for (const d of dispatchers.splice(0)) await d.stop();
      await reopened.close();
    }
    const types = r.received.map((x) => x.body.type.replace("sandbox.lifecycle.", ""));
    // the order of concurrent deliveries is not kept: ids and timestamps sort by time
    expect(types.slice(0, 2).sort()).toEqual(["created", "paused"]);
    expect(types.slice(2).sort()).toEqual(["created", "killed", "resumed"]);
    expect(new Set(r.eventIds()).size).toBe(5);
    const killed = r.received.find((x) => x.body.type === "sandbox.lifecycle.killed")!.body;
    expect(killed.eventData.kill_reason).toBe("shutdown");
  });

  it("a request cut by a stop is sent again by the next start, its attempt not counted", async () => {
    const r = await receiver((n) => (n === 0 ? "hang" : 200));
    const hook = await webhook(r.url, ["sandbox.lifecycle.created"]);
    const first = dispatcher(store, { stopGraceMs: 50 });
    await record("sandbox.created", await sandbox());
    await waitUntil("the first request is open", () => r.open() === 1);
    await first.stop();
    dispatcher();
    await quiet();
    expect(r.received).toHaveLength(2);
    expect(r.received[0]!.raw).toBe(r.received[1]!.raw);
    const log = await store.webhookDeliveries.attempts(hook.id, { limit: 10 });
    expect(log.map((a) => [a.attempt, a.outcome])).toEqual([[1, "delivered"]]);
  });

  it("two dispatchers on one database send each event once", async () => {
    const r = await receiver();
    await webhook(r.url, ["sandbox.lifecycle.created"]);
    const second = await openStore(t.options);
    try {
      dispatcher();
      dispatcher(second);
      const ids: string[] = [];
      for (let i = 0; i < 20; i++) {
        const id = await sandbox();
        ids.push(id);
        await record("sandbox.created", id, {}, teamId, i % 2 ? store : second);
      }
      await quiet();
      expect(r.received.map((x) => x.body.sandboxId).sort()).toEqual([...ids].sort());
    } finally {
      for (const d of dispatchers.splice(0)) await d.stop();
      await second.close();
    }
  });

  it("deleting a webhook takes its deliveries and log with it; old attempts are pruned", async () => {
    const r = await receiver();
    const hook = await webhook(r.url, ["sandbox.lifecycle.created"]);
    dispatcher();
    await record("sandbox.created", await sandbox());
    await quiet();
    expect(await store.webhookDeliveries.attempts(hook.id, { limit: 10 })).toHaveLength(1);

    await store.webhookDeliveries.prune(new Date(Date.now() + 1000).toISOString());
    expect(await store.webhookDeliveries.attempts(hook.id, { limit: 10 })).toEqual([]);
    expect(await rowsOf("webhook_deliveries", hook.id)).toEqual([]);

    await record("sandbox.created", await sandbox());
    await quiet();
    expect(await store.webhooks.delete(teamId, hook.id)).toBe(true);
    expect(await rowsOf("webhook_attempts", hook.id)).toEqual([]);
  });
});
