/**
 * `x api` in front of a node that fails at the chosen moment (a real server on loopback, over
 * a real catalog in SQLite): the request refused by the spec's checks never leaves the api;
 * a create the node never received is a 503 to retry; one it began and lost is called off
 * (502, the sandbox ended in the catalog); one it finished is handed over (201).
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type net from "node:net";
import os from "node:os";
import path from "node:path";
import { createAuthenticator } from "../api/authenticate.js";
import { CREATE_TICKET_HEADER } from "../api/routes/sandboxes.js";
import { newSandboxId } from "../lib/ids.js";
import { silentLogger } from "../lib/log.js";
import type { Team } from "../model/team.js";
import { openStore, type Store } from "../store/index.js";
import { fakeSealer } from "../store/testing/fake-sealer.js";
import { sandboxRecord } from "../store/testing/sandbox-record.js";
import { createApiRouter } from "./api-router.js";

type Behaviour = (req: http.IncomingMessage, res: http.ServerResponse, ticket: string) => Promise<void>;

let dir: string;
let store: Store;
let team: Team;
let apiKey: string;
let api: http.Server;
let apiUrl: string;
let node: http.Server;
let close: () => void;
/** What the node does with the next request; every request it got, with its headers. */
let behave: Behaviour;
const received: http.IncomingHttpHeaders[] = [];

const listen = async (server: http.Server) => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as net.AddressInfo).port}`;
};

async function registerNode(apiUrl: string): Promise<void> {
  await store.nodes.register({
    id: "n1",
    apiUrl,
    trafficUrl: "http://127.0.0.1:1",
    capacity: {
      cpus: 2,
      memoryTotalMB: 8192,
      memoryFreeMB: 4096,
      sandboxes: 0,
      maxSandboxes: 100,
      load: 0,
      runtimes: ["runc"],
      pool: {},
    },
  });
}

/** A sandbox row as a node writes it when it begins one. */
async function begin(id: string): Promise<void> {
  const template = await store.templates.createTemplate(team.id);
  await store.sandboxes.insert(
    sandboxRecord({ id, teamId: team.id, templateId: template.id, state: "starting" }),
  );
}

const readAll = (req: http.IncomingMessage) =>
  new Promise<void>((resolve) => {
    req.resume();
    req.on("end", resolve);
  });

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "x-api-router-"));
  store = await openStore({ dataDir: dir, sealer: fakeSealer() });
  apiKey = (await store.teams.ensureFirstTeam())!;
  team = await store.teams.defaultTeam();
  node = http.createServer((req, res) => {
    received.push(req.headers);
    const ticket = String(req.headers[CREATE_TICKET_HEADER] ?? "");
    behave(req, res, ticket).catch((err: unknown) => {
      res.writeHead(500);
      res.end(String(err));
    });
  });
  await registerNode(await listen(node));
  const router = createApiRouter({
    store,
    authenticate: createAuthenticator(store, silentLogger),
    heartbeatTimeoutMs: 600_000,
    log: silentLogger,
  });
  close = router.close;
  api = http.createServer(router.handler);
  apiUrl = await listen(api);
});

afterAll(async () => {
  close?.();
  for (const server of [api, node]) {
    server?.closeAllConnections();
    await new Promise((resolve) => server?.close(resolve));
  }
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

beforeEach(() => {
  received.length = 0;
});

async function create(body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${apiUrl}/v2/sandboxes`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-api-key": apiKey, ...headers },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
}

const tickets = async () => (await store.db.kysely.selectFrom("create_tickets").selectAll().execute()).length;

it("refuses what the spec refuses, as x serve does, without sending it on", async () => {
  behave = async () => {
    throw new Error("the node must not be asked");
  };
  const invalid = await create({ timeout: 30 });
  expect(invalid.status).toBe(400);
  expect(invalid.body).toEqual({ code: 400, message: "body: missing required field 'templateID'" });
  const unauthenticated = await create({ templateID: "base" }, { "x-api-key": "e2b_wrong" });
  expect(unauthenticated.status).toBe(401);
  const missing = await fetch(`${apiUrl}/v2/sandboxes/s1/nowhere`, { headers: { "x-api-key": apiKey } });
  expect(missing.status).toBe(404);
  expect(received).toEqual([]);
});

it("passes the node's answer on, with the caller's request id on both hops", async () => {
  behave = async (req, res) => {
    await readAll(req);
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify({ sandboxID: "from-node" }));
  };
  const created = await create({ templateID: "base" }, { "x-request-id": "drill-1" });
  expect(created.status).toBe(201);
  expect(created.body).toEqual({ sandboxID: "from-node" });
  expect(created.headers.get("x-request-id")).toBe("drill-1");
  expect(received[0]?.["x-request-id"]).toBe("drill-1");
  // the ticket went with the create, and is done with once answered
  expect(received[0]?.[CREATE_TICKET_HEADER]).toBeTruthy();
  expect(await tickets()).toBe(0);
});

it("a caller's own ticket never reaches the node", async () => {
  behave = async (req, res) => {
    await readAll(req);
    res.writeHead(201, { "content-type": "application/json" });
    res.end("{}");
  };
  await create({ templateID: "base" }, { [CREATE_TICKET_HEADER]: "forged" });
  expect(received[0]?.[CREATE_TICKET_HEADER]).not.toBe("forged");
});

it("a create the node began and lost is called off: 502, no retry hint, its sandbox ended", async () => {
  const id = newSandboxId();
  let ticket = "";
  behave = async (req, _res, key) => {
    await readAll(req);
    ticket = key;
    expect(await store.createTickets.claim(key, team.id, "n1", id)).toBe(true);
    await begin(id);
    req.socket.resetAndDestroy(); // killed after it received the body and began a sandbox
  };
  const failed = await create({ templateID: "base" });
  expect(failed.status).toBe(502);
  expect(failed.headers.get("retry-after")).toBeNull();
  expect(failed.body.code).toBe(502);
  expect(failed.body.message).toContain(`sandbox ${id}, which the node had begun for it, is ended`);
  expect(failed.body.message).toContain("creating again makes one sandbox");
  expect((await store.sandboxes.get(id))?.state).toBe("killed");
  expect(await store.sandboxes.countLive(team.id)).toBe(0);
  // the node, had it lived, could not finish it
  expect(await store.createTickets.confirm(ticket, id)).toBe(false);
  expect(await tickets()).toBe(0);
});

it("a create the node finished and lost the answer to is handed over as created", async () => {
  const id = newSandboxId();
  behave = async (req, res, key) => {
    if (req.url === "/v2/sandboxes") {
      await readAll(req);
      expect(await store.createTickets.claim(key, team.id, "n1", id)).toBe(true);
      await begin(id);
      await store.sandboxes.update(id, { state: "running" });
      expect(await store.createTickets.confirm(key, id)).toBe(true);
      req.socket.resetAndDestroy();
      return;
    }
    expect(req.url).toBe(`/v2/sandboxes/${id}/connect`);
    await readAll(req);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ sandboxID: id, handedOver: true }));
  };
  const created = await create({ templateID: "base", timeout: 60 });
  expect(created.status).toBe(201);
  expect(created.body).toEqual({ sandboxID: id, handedOver: true });
  expect((await store.sandboxes.get(id))?.state).toBe("running");
  await store.sandboxes.update(id, { state: "killed" });
});

/** What a node does first with a create under an Idempotency-Key: the key held by the api's ticket. */
async function holdKey(key: string, ticket: string): Promise<void> {
  const claim = await store.idempotencyKeys.claim({
    teamId: team.id,
    key,
    requestHash: "h",
    ticket,
    leaseMs: 15_000,
  });
  expect(claim.kind).toBe("claimed");
}

it("sends a create whose key made its sandbox already to a node without placing it (no ticket)", async () => {
  const ticket = await store.createTickets.issue(team.id, "n1");
  await holdKey("made-1", ticket);
  expect(await store.idempotencyKeys.finish(team.id, "made-1", ticket, "i-made")).toBe(true);
  await store.createTickets.settle(ticket);
  behave = async (req, res) => {
    await readAll(req);
    res.writeHead(201, { "content-type": "application/json" });
    res.end(JSON.stringify({ sandboxID: "i-made" }));
  };
  const again = await create({ templateID: "base" }, { "Idempotency-Key": "made-1" });
  expect(again).toMatchObject({ status: 201, body: { sandboxID: "i-made" } });
  expect(received[0]?.["idempotency-key"]).toBe("made-1");
  // placed creates carry a ticket: this one was not placed
  expect(received[0]?.[CREATE_TICKET_HEADER]).toBeUndefined();
});

it("passes an Idempotency-Key on; a keyed create the node began and lost leaves the key free", async () => {
  const id = newSandboxId();
  behave = async (req, _res, ticket) => {
    await readAll(req);
    await holdKey(String(req.headers["idempotency-key"]), ticket);
    expect(await store.createTickets.claim(ticket, team.id, "n1", id)).toBe(true);
    await begin(id);
    req.socket.resetAndDestroy();
  };
  const failed = await create({ templateID: "base" }, { "Idempotency-Key": "lost-1" });
  expect(failed.status).toBe(502);
  expect(failed.body.message).toContain("creating again makes one sandbox");
  expect(received[0]?.["idempotency-key"]).toBe("lost-1");
  // called off: a retry with the key makes the one sandbox
  expect(await store.idempotencyKeys.get(team.id, "lost-1")).toBeUndefined();
  expect((await store.sandboxes.get(id))?.state).toBe("killed");
});

it("a keyed create the node finished and lost the answer to keeps its key on the sandbox handed over", async () => {
  const id = newSandboxId();
  behave = async (req, res, ticket) => {
    if (req.url === "/v2/sandboxes") {
      await readAll(req);
      await holdKey(String(req.headers["idempotency-key"]), ticket);
      expect(await store.createTickets.claim(ticket, team.id, "n1", id)).toBe(true);
      await begin(id);
      await store.sandboxes.update(id, { state: "running" });
      expect(await store.createTickets.confirm(ticket, id)).toBe(true);
      req.socket.resetAndDestroy(); // before it recorded the sandbox on the key
      return;
    }
    await readAll(req);
    res.writeHead(200, { "content-type": "application/json" });
    res.end(JSON.stringify({ sandboxID: id }));
  };
  const created = await create({ templateID: "base" }, { "Idempotency-Key": "handed-1" });
  expect(created.status).toBe(201);
  expect((await store.idempotencyKeys.get(team.id, "handed-1"))?.sandboxId).toBe(id);
  expect(await tickets()).toBe(0);
  await store.sandboxes.update(id, { state: "killed" });
});

it("a create the node never received is a 503 to retry, and leaves no ticket", async () => {
  node.closeAllConnections();
  await new Promise((resolve) => node.close(resolve));
  const failed = await create({ templateID: "base" });
  expect(failed.status).toBe(503);
  expect(failed.headers.get("retry-after")).toBe("2");
  expect(failed.body.message).toMatch(/node n1 did not receive this create \(ECONNREFUSED\); try again/);
  expect(await tickets()).toBe(0);
});
