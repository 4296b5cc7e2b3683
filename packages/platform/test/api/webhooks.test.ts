/**
 * Lifecycle webhooks and the events API over HTTP against a real platform (runc sandboxes), on
 * SQLite and PostgreSQL: the webhooks API with its checks and a second team that sees none of
 * the first's; a sandbox's life delivered once per event, signed, to a receiver on 127.0.0.1
 * while another receiver hangs; the same events polled; a timeout's kill told apart; and a
 * restart of the platform on the same store that neither loses nor repeats a delivery.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SANDBOX_EVENT_TYPES } from "../../src/model/webhook.js";
import { startTestPlatform } from "../helpers/platform.js";
import { DIALECTS, freshPostgresDatabase } from "../helpers/stores.js";
import {
  deliveriesSettled,
  startReceiver,
  type WebhookReceiver,
  waitUntil,
} from "../helpers/webhook-receiver.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

const SECRET = "whsec-api-test-secret-value";
/** The receivers are on 127.0.0.1, which an operator must allow (`--allow-private-webhooks`). */
const RECEIVERS_ALLOWED = { allowPrivateWebhooks: ["127.0.0.1"] };
const ALL = [...SANDBOX_EVENT_TYPES];

const short = (type: string) => type.replace("sandbox.lifecycle.", "");

describe.each(DIALECTS)("webhooks API on %s", (dialect) => {
  let api: ApiPlatform;
  const receivers: WebhookReceiver[] = [];

  beforeAll(async () => {
    api = await startApiPlatform(dialect, RECEIVERS_ALLOWED);
  });

  afterAll(async () => {
    await api?.stop();
  });

  afterEach(async () => {
    for (const key of [undefined, api.other.key]) {
      const list = await api.request("GET", "/events/webhooks", { key });
      for (const w of list.body) await api.request("DELETE", `/events/webhooks/${w.id}`, { key });
    }
    for (const r of receivers.splice(0)) await r.close();
  });

  async function receiver(answer?: Parameters<typeof startReceiver>[1]): Promise<WebhookReceiver> {
    const r = await startReceiver(SECRET, answer);
    receivers.push(r);
    return r;
  }

  async function register(url: string, body: Record<string, unknown> = {}, key?: string): Promise<string> {
    const res = await api.request("POST", "/events/webhooks", {
      body: { name: "hook", url, events: ALL, signatureSecret: SECRET, ...body },
      key,
    });
    expect(res.status).toBe(201);
    return res.body.id;
  }

  it("creates, lists, gets, updates and deletes webhooks, never answering the secret", async () => {
    const created = await api.request("POST", "/events/webhooks", {
      body: {
        name: "My Sandbox Webhook",
        url: "https://hooks.example.com/e2b",
        events: ["sandbox.lifecycle.created", "sandbox.lifecycle.killed", "sandbox.lifecycle.created"],
        signatureSecret: SECRET,
      },
    });
    expect(created.status).toBe(201);
    const team = (await api.t.platform.defaultTeam()).id;
    expect(created.body).toEqual({
      id: expect.any(String),
      teamID: team,
      teamId: team,
      name: "My Sandbox Webhook",
      createdAt: expect.any(String),
      enabled: true,
      url: "https://hooks.example.com/e2b",
      events: ["sandbox.lifecycle.created", "sandbox.lifecycle.killed"],
    });
    const id = created.body.id as string;

    const list = await api.request("GET", "/events/webhooks");
    expect(list.status).toBe(200);
    expect(list.body).toEqual([created.body]);
    const got = await api.request("GET", `/events/webhooks/${id}`);
    expect(got.body).toEqual(created.body);

    const patched = await api.request("PATCH", `/events/webhooks/${id}`, {
      body: { enabled: false, events: ["sandbox.lifecycle.paused"], signatureSecret: "rotated-secret" },
    });
    expect(patched.status).toBe(200);
    expect(patched.body).toEqual({ ...created.body, enabled: false, events: ["sandbox.lifecycle.paused"] });
    for (const res of [created, list, got, patched]) {
      expect(JSON.stringify(res.body)).not.toContain(SECRET);
      expect(JSON.stringify(res.body)).not.toContain("rotated-secret");
    }

    const deleted = await api.request("DELETE", `/events/webhooks/${id}`);
    expect(deleted.status).toBe(200);
    expect((await api.request("GET", `/events/webhooks/${id}`)).status).toBe(404);
    const again = await api.request("DELETE", `/events/webhooks/${id}`);
    expect(again.status).toBe(404);
    expect(again.body).toEqual({ code: 404, message: `webhook ${id} not found` });
  });

  it("refuses bad input with 400 and a message naming what is wrong", async () => {
    const bad = async (body: Record<string, unknown>, message: RegExp) => {
      const res = await api.request("POST", "/events/webhooks", {
        body: { name: "n", url: "https://example.com/h", events: ALL, signatureSecret: SECRET, ...body },
      });
      expect(res.status).toBe(400);
      expect(res.body.code).toBe(400);
      expect(res.body.message).toMatch(message);
    };
    await bad({ url: undefined }, /missing required field 'url'/);
    await bad({ url: "ftp://example.com/h" }, /url: must be an http:\/\/ or https:\/\/ URL/);
    await bad({ url: "/relative/path" }, /url: '\/relative\/path' is not an absolute URL/);
    await bad({ url: "https://user:pw@example.com/h" }, /url: must not carry a user name or password/);
    await bad(
      { url: `https://example.com/${"x".repeat(2048)}` },
      /body\.url must NOT have more than 2048 characters/,
    );
    await bad({ events: [] }, /body\.events must NOT have fewer than 1 items/);
    await bad(
      { events: ["sandbox.lifecycle.exploded"] },
      /body\.events\.0 must be one of sandbox\.lifecycle\.created/,
    );
    await bad({ events: "sandbox.lifecycle.created" }, /body\.events must be array/);
    await bad({ name: "" }, /body\.name must NOT have fewer than 1 characters/);
    await bad({ name: "   " }, /name: must not be blank/);
    await bad({ name: "n".repeat(129) }, /body\.name must NOT have more than 128 characters/);
    await bad({ signatureSecret: "" }, /body\.signatureSecret must NOT have fewer than 1 characters/);
    await bad({ signatureSecret: "s".repeat(257) }, /body\.signatureSecret must NOT have more than 256/);
    await bad({ enabled: "yes" }, /body\.enabled must be boolean/);
    expect((await api.request("GET", "/events/webhooks")).body).toEqual([]);

    const id = await register("https://example.com/h");
    const patch = await api.request("PATCH", `/events/webhooks/${id}`, { body: {} });
    expect(patch.status).toBe(400);
    expect(patch.body.message).toMatch(/nothing to update/);
    const badUrl = await api.request("PATCH", `/events/webhooks/${id}`, {
      body: { url: "mailto:x@example.com" },
    });
    expect(badUrl.status).toBe(400);
    const token = await api.request("GET", `/events/webhooks/${id}/deliveries?nextToken=nope`);
    expect(token.status).toBe(400);
    expect(token.body.message).toMatch(/nextToken/);
    const events = await api.request("GET", "/events/sandboxes?limit=101");
    expect(events.status).toBe(400);
  });

  it("keeps a team to 20 webhooks", async () => {
    for (let i = 1; i < 20; i++) await register(`https://example.com/${i}`);
    await register("https://example.com/20");
    const over = await api.request("POST", "/events/webhooks", {
      body: { name: "21st", url: "https://example.com/21", events: ALL, signatureSecret: SECRET },
    });
    expect(over.status).toBe(400);
    expect(over.body.message).toMatch(/at most 20 webhooks/);
    // another team's count is its own
    await register("https://example.com/other", {}, api.other.key);
  });

  it("shows another team none of a team's webhooks: 404 as for unknown ones", async () => {
    const id = await register("https://example.com/mine");
    const key = api.other.key;
    expect((await api.request("GET", "/events/webhooks", { key })).body).toEqual([]);
    for (const [method, suffix, body] of [
      ["GET", "", undefined],
      ["PATCH", "", { enabled: false }],
      ["DELETE", "", undefined],
      ["GET", "/deliveries", undefined],
    ] as const) {
      const res = await api.request(method, `/events/webhooks/${id}${suffix}`, { key, body });
      expect(res.status).toBe(404);
      expect(res.body.message).toBe(`webhook ${id} not found`);
    }
    expect((await api.request("GET", `/events/webhooks/${id}`)).body.enabled).toBe(true);
    expect((await api.request("GET", "/events/webhooks", { key: null })).status).toBe(401);
  });

  it("delivers a sandbox's life once per event, signed, while a hung endpoint waits; the events API shows the same", async () => {
    const ok = await receiver();
    const hung = await receiver(() => "hang");
    const others = await receiver();
    const hook = await register(ok.url);
    await register(hung.url);
    await register(others.url, {}, api.other.key);

    const created = await api.request("POST", "/v2/sandboxes", {
      body: { templateID: "base", timeout: 120, metadata: { purpose: "webhooks" } },
    });
    expect(created.status).toBe(201);
    const id = created.body.sandboxID as string;
    expect((await api.request("POST", `/sandboxes/${id}/timeout`, { body: { timeout: 300 } })).status).toBe(
      204,
    );
    expect((await api.request("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
    expect((await api.request("POST", `/sandboxes/${id}/resume`, { body: { timeout: 120 } })).status).toBe(
      201,
    );
    expect((await api.request("DELETE", `/sandboxes/${id}`)).status).toBe(204);

    await waitUntil("five deliveries", () => ok.received.length >= 5, 30_000);
    await deliveriesSettled(api.t.platform.store, { webhookIds: [hook] });
    expect(ok.received.map((r) => short(r.body.type)).sort()).toEqual(
      ["created", "killed", "paused", "resumed", "updated"].sort(),
    );
    expect(new Set(ok.eventIds()).size).toBe(5);
    expect(ok.received.every((r) => r.signed && r.headers["e2b-webhook-id"] === hook)).toBe(true);
    const byType = Object.fromEntries(ok.received.map((r) => [short(r.body.type), r.body]));
    expect(byType.created).toMatchObject({
      version: "v2",
      sandboxId: id,
      sandboxTemplateId: created.body.templateID,
      eventData: { sandbox_metadata: { purpose: "webhooks" } },
    });
    expect(byType.killed.eventData).toMatchObject({
      kill_reason: "request",
      execution: { vcpu_count: expect.any(Number), memory_mb: expect.any(Number) },
    });
    expect(byType.killed.sandboxExecutionId).toBe(byType.resumed.id);
    expect(byType.updated.eventData.set_timeout).toEqual(expect.any(String));
    // the other team's webhook heard nothing of it; the hung one holds its requests open
    expect(others.received).toEqual([]);
    expect(hung.open()).toBeGreaterThan(0);

    const polled = await api.request("GET", `/events/sandboxes/${id}?orderAsc=true`);
    expect(polled.status).toBe(200);
    expect(polled.body.map((e: { type: string }) => short(e.type))).toEqual([
      "created",
      "updated",
      "paused",
      "resumed",
      "killed",
    ]);
    for (const event of polled.body)
      expect(event).toEqual(ok.received.find((r) => r.body.id === event.id)!.body);
    const newest = await api.request("GET", "/events/sandboxes?limit=2");
    expect(newest.body.map((e: { type: string }) => short(e.type))).toEqual(["killed", "resumed"]);
    const skipped = await api.request("GET", `/events/sandboxes/${id}?offset=4`);
    expect(skipped.body.map((e: { type: string }) => short(e.type))).toEqual(["created"]);
    expect((await api.request("GET", `/events/sandboxes/${id}`, { key: api.other.key })).body).toEqual([]);

    const log = await api.request("GET", `/events/webhooks/${hook}/deliveries?limit=3`);
    expect(log.status).toBe(200);
    expect(log.body).toHaveLength(3);
    expect(log.body[0]).toEqual({
      deliveryID: expect.any(String),
      eventID: expect.any(String),
      eventType: expect.any(String),
      attempt: 1,
      timestamp: expect.any(String),
      statusCode: 200,
      error: null,
      durationMs: expect.any(Number),
      outcome: "delivered",
    });
    const next = log.headers.get("x-next-token");
    expect(next).toEqual(expect.any(String));
    const rest = await api.request("GET", `/events/webhooks/${hook}/deliveries?limit=3&nextToken=${next}`);
    expect(rest.body).toHaveLength(2);
    expect(rest.headers.get("x-next-token")).toBeNull();
    const all = [...log.body, ...rest.body];
    expect(new Set(all.map((a: { eventID: string }) => a.eventID))).toEqual(new Set(ok.eventIds()));
    expect(new Set(all.map((a: { deliveryID: string }) => a.deliveryID))).toEqual(
      new Set(ok.received.map((r) => r.headers["e2b-delivery-id"])),
    );
  });

  it("tells a kill by timeout apart: timed_out, then killed with kill_reason timeout", async () => {
    const ok = await receiver();
    await register(ok.url, { events: ["sandbox.lifecycle.timed_out", "sandbox.lifecycle.killed"] });
    const created = await api.request("POST", "/v2/sandboxes", { body: { templateID: "base", timeout: 1 } });
    expect(created.status).toBe(201);
    const id = created.body.sandboxID as string;
    await waitUntil("the timeout's two events", () => ok.received.length >= 2, 30_000);
    const [timedOut, killed] = [...ok.received]
      .sort((a, b) => (a.body.id < b.body.id ? -1 : 1))
      .map((r) => r.body);
    expect(timedOut).toMatchObject({
      type: "sandbox.lifecycle.timed_out",
      sandboxId: id,
      eventData: { timeout_action: "kill" },
    });
    expect(killed).toMatchObject({
      type: "sandbox.lifecycle.killed",
      sandboxId: id,
      eventData: { kill_reason: "timeout" },
    });
  });
});

describe.each(DIALECTS)("webhooks through a platform restart on %s", (dialect) => {
  it("delivers what happened around the restart once, and nothing twice", async () => {
    const scratch = mkdtempSync(path.join(os.tmpdir(), "x-webhooks-"));
    const pg = dialect === "postgres" ? await freshPostgresDatabase() : undefined;
    const databaseUrl = pg?.url ?? `sqlite:${path.join(scratch, "platform.db")}`;
    const ok = await startReceiver(SECRET);
    try {
      const first = await startTestPlatform({ runtime: "runc", databaseUrl, config: RECEIVERS_ALLOWED });
      const call = (t: typeof first, method: string, url: string, body?: unknown) =>
        fetch(`${t.apiUrl}${url}`, {
          method,
          headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
      let id = "";
      try {
        const hook = await call(first, "POST", "/events/webhooks", {
          name: "restart",
          url: ok.url,
          events: ["sandbox.lifecycle.created", "sandbox.lifecycle.killed"],
          signatureSecret: SECRET,
        });
        expect(hook.status).toBe(201);
        const created = await call(first, "POST", "/v2/sandboxes", { templateID: "base", timeout: 300 });
        expect(created.status).toBe(201);
        id = ((await created.json()) as { sandboxID: string }).sandboxID;
        await waitUntil("the create is delivered", () => ok.received.length === 1, 30_000);
      } finally {
        // a stop for good: the sandbox is killed after the dispatcher stopped
        await first.stop();
      }
      expect(ok.received).toHaveLength(1);

      const second = await startTestPlatform({ runtime: "runc", databaseUrl, config: RECEIVERS_ALLOWED });
      try {
        await deliveriesSettled(second.platform.store);
      } finally {
        await second.stop();
      }
      expect(ok.received.map((r) => [short(r.body.type), r.body.sandboxId])).toEqual([
        ["created", id],
        ["killed", id],
      ]);
      expect(ok.received[1]!.body.eventData.kill_reason).toBe("shutdown");
      expect(ok.received.every((r) => r.signed)).toBe(true);
    } finally {
      await ok.close();
      await pg?.drop();
      rmSync(scratch, { recursive: true, force: true });
    }
  });
});
