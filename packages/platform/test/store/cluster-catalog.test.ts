/**
 * The cluster's catalog on PostgreSQL: placement (spread, refusals, no over-commit by apis
 * deciding at once), node loss (down once, sandboxes lost, the node told by its heartbeat), and
 * the notifications the proxies' caches hang on.
 */
import { createHash, randomBytes } from "node:crypto";
import { sql } from "kysely";
import pg from "pg";
import { createCatalogResolver } from "../../src/cluster/catalog-resolver.js";
import { NodeMonitor } from "../../src/cluster/node-monitor.js";
import { place } from "../../src/cluster/placement.js";
import { newSandboxId } from "../../src/lib/ids.js";
import { silentLogger } from "../../src/lib/log.js";
import type { Sandbox } from "../../src/model/sandbox.js";
import { signedFileMatcher } from "../../src/proxy/routing.js";
import { SecretBox } from "../../src/secrets/secret-box.js";
import { type NodeCapacity, openStore, type Store } from "../../src/store/index.js";
import { sandboxRecord } from "../../src/store/testing/sandbox-record.js";
import { freshPostgresDatabase } from "../helpers/stores.js";

const capacity = (over: Partial<NodeCapacity> = {}): NodeCapacity => ({
  cpus: 2,
  memoryTotalMB: 8192,
  memoryFreeMB: 4096,
  sandboxes: 0,
  maxSandboxes: 100,
  load: 0,
  runtimes: ["runc", "runsc"],
  pool: {},
  ...over,
});

/** The nodes' secrets key, shared: every node and proxy of a cluster is given the same file. */
const sealer = SecretBox.of(randomBytes(32));
let db: { url: string; drop(): Promise<void> };
let store: Store;
let teamId: string;

beforeAll(async () => {
  db = await freshPostgresDatabase();
  store = await openStore({ databaseUrl: db.url, dataDir: "/nonexistent", sealer });
  teamId = (await store.teams.createTeam("t", "t")).id;
});

afterAll(async () => {
  await store?.close();
  await db?.drop();
});

beforeEach(async () => {
  await store.db.kysely.deleteFrom("placements").execute();
  await store.db.kysely.deleteFrom("nodes").execute();
});

async function sandboxOn(nodeId: string, state: Sandbox["state"] = "running"): Promise<string> {
  const nodeStore = await openStore({ databaseUrl: db.url, dataDir: "/nonexistent", nodeId, sealer });
  const id = newSandboxId();
  const template = await nodeStore.templates.createTemplate(teamId);
  try {
    await nodeStore.sandboxes.insert(sandboxRecord({ id, teamId, templateId: template.id, state }));
  } finally {
    await nodeStore.close();
  }
  return id;
}

const register = (id: string, c: Partial<NodeCapacity> = {}) =>
  store.nodes.register({
    id,
    apiUrl: `http://${id}:3000`,
    trafficUrl: `http://${id}:3002`,
    capacity: capacity(c),
  });

test("placement spreads over nodes and prefers a ready pool member", async () => {
  await register("n1", { sandboxes: 4 });
  await register("n2", { sandboxes: 1 });
  await register("n3", { sandboxes: 6, pool: { b1: 1 } });
  const least = await place(store, { memoryMB: 512 }, 10_000);
  expect(least.node.id).toBe("n2");
  const pooled = await place(store, { memoryMB: 512, buildId: "b1" }, 10_000);
  expect(pooled.node.id).toBe("n3");
  // the member is spoken for by the placement in flight: the next goes by load again
  const next = await place(store, { memoryMB: 512, buildId: "b1" }, 10_000);
  expect(next.node.id).toBe("n2");
});

test("draining, down, silent, full and memory-short nodes are refused with their reasons", async () => {
  await register("drained");
  await store.nodes.setState("drained", "draining");
  await register("full", { sandboxes: 3, maxSandboxes: 3 });
  await register("short", { memoryFreeMB: 100 });
  await register("gvisorless", { runtimes: ["runc"] });
  await expect(place(store, { memoryMB: 512, runtime: "runsc" }, 10_000)).rejects.toMatchObject({
    code: "unavailable",
    message: expect.stringMatching(
      /drained: draining.*full: full \(3 sandboxes\).*gvisorless: no runsc.*short: out of memory/,
    ),
  });
  await expect(place(store, { memoryMB: 512, nodeId: "drained" }, 10_000)).rejects.toMatchObject({
    message: expect.stringContaining("node drained (where its volumes are)"),
  });
});

// 40 at once from 8 stores: without the lock a dozen or more get through (measured), and a lock
// holder that needed a second connection would time out waiting for one (it did, once)
test("apis placing at once never hand a node more than its room", async () => {
  await register("small", { maxSandboxes: 3 });
  const stores = await Promise.all(
    Array.from({ length: 4 }, () => openStore({ databaseUrl: db.url, dataDir: "/nonexistent", sealer })),
  );
  try {
    const results = await Promise.allSettled(
      Array.from({ length: 40 }, (_, i) => place(stores[i % stores.length]!, { memoryMB: 512 }, 10_000)),
    );
    expect(results.filter((r) => r.status === "fulfilled")).toHaveLength(3);
    expect(results.filter((r) => r.status === "rejected")).toHaveLength(37);
  } finally {
    await Promise.all(stores.map((s) => s.close()));
  }
});

test("a silent node is marked down once, its sandboxes lost with the reason, and its heartbeat says so", async () => {
  await register("alive");
  await register("silent");
  const running = await sandboxOn("silent");
  const paused = await sandboxOn("silent", "paused");
  const elsewhere = await sandboxOn("alive");
  await store.db.kysely
    .updateTable("nodes")
    .set({ heartbeat_at: new Date(Date.now() - 30_000).toISOString() })
    .where("id", "=", "silent")
    .execute();
  const monitors = [1, 2].map(() => new NodeMonitor({ store, heartbeatTimeoutMs: 6000, log: silentLogger }));
  await Promise.all(monitors.map((m) => m.check()));
  expect((await store.nodes.get("silent"))?.state).toBe("down");
  expect((await store.nodes.get("alive"))?.state).toBe("ready");
  for (const id of [running, paused]) {
    const s = await store.sandboxes.get(id);
    expect(s).toMatchObject({
      state: "lost",
      reason: expect.stringContaining("its node silent stopped answering"),
    });
  }
  expect((await store.sandboxes.get(elsewhere))?.state).toBe("running");
  // one api marked it: one event per sandbox
  const events = await store.db.kysely
    .selectFrom("events")
    .selectAll()
    .where("type", "=", "sandbox.lost")
    .execute();
  expect(events.map((e) => e.sandbox_id).sort()).toEqual([running, paused].sort());
  // the node, still alive, learns it from its next heartbeat
  expect(await store.nodes.heartbeat("silent", capacity())).toBe(false);
  expect(await store.nodes.heartbeat("alive", capacity())).toBe(true);
});

test("the proxies' cache drops a sandbox when the catalog announces its change", async () => {
  await register("n1");
  await register("n2");
  const id = await sandboxOn("n1");
  const resolver = createCatalogResolver({ store, databaseUrl: db.url, log: silentLogger });
  await resolver.listen();
  const listener = new pg.Client({ connectionString: db.url });
  await listener.connect();
  try {
    expect(await resolver.resolve(id)).toEqual({ state: "running", address: "n1", relayPort: 3002 });
    // a change nobody announces is not seen: the answer comes from the cache, not a query
    await sql`alter table sandboxes disable trigger sandboxes_notify`.execute(store.db.kysely);
    await store.db.kysely.updateTable("sandboxes").set({ node_id: "n3" }).where("id", "=", id).execute();
    await sql`alter table sandboxes enable trigger sandboxes_notify`.execute(store.db.kysely);
    expect(await resolver.resolve(id)).toEqual({ state: "running", address: "n1", relayPort: 3002 });
    const heard = new Promise<string | undefined>((resolve) =>
      listener.on("notification", (n) => resolve(n.payload)),
    );
    await listener.query("listen x_sandboxes");
    await store.db.kysely.updateTable("sandboxes").set({ node_id: "n2" }).where("id", "=", id).execute();
    expect(await heard).toBe(id);
    // the resolver heard it too (same server, same order): a lookup now finds the new node
    await new Promise((r) => setTimeout(r, 200));
    expect(await resolver.resolve(id)).toEqual({ state: "running", address: "n2", relayPort: 3002 });
    await store.sandboxes.markLost("n2", "its node n2 stopped answering");
    await new Promise((r) => setTimeout(r, 200));
    expect(await resolver.resolve(id)).toEqual({ state: "lost", reason: "its node n2 stopped answering" });
  } finally {
    await listener.end();
    await resolver.close();
  }
});

test("the proxies match signed file URLs against tokens read once, then only the sandboxes announced since", async () => {
  await register("n1");
  const first = await sandboxOn("n1");
  const reads: Array<readonly string[] | undefined> = [];
  const sandboxes = Object.create(store.sandboxes) as Store["sandboxes"];
  sandboxes.runningTokens = (ids) => {
    reads.push(ids);
    return store.sandboxes.runningTokens(ids);
  };
  const resolver = createCatalogResolver({
    store: { ...store, sandboxes },
    databaseUrl: db.url,
    log: silentLogger,
  });
  await resolver.listen();
  const signedBy = async (id: string) => {
    const token = (await store.sandboxes.get(id))!.envdAccessToken;
    const signature = `v1_${createHash("sha256").update(`f:read::${token}`).digest("base64").replace(/=+$/, "")}`;
    return signedFileMatcher("GET", `/files?path=f&signature=${encodeURIComponent(signature)}`)!;
  };
  try {
    const url = await signedBy(first);
    const bogus = signedFileMatcher("GET", "/files?path=x&signature=v1_x")!;
    for (let i = 0; i < 1000; i++) {
      expect(await resolver.resolveSigned!(url)).toBe(first);
      expect(await resolver.resolveSigned!(bogus)).toBeUndefined();
    }
    // 2000 lookups, one read of the catalog
    expect(reads).toEqual([undefined]);
    const second = await sandboxOn("n1");
    const url2 = await signedBy(second);
    // the announcement reaches the resolver on its own connection: ask until it has it
    let found: string | undefined;
    for (let i = 0; i < 100 && !found; i++) {
      found = await resolver.resolveSigned!(url2);
      if (!found) await new Promise((r) => setTimeout(r, 50));
    }
    expect(found).toBe(second);
    // only the sandbox announced is read again (its insert), never all of them
    expect(reads.slice(1).every((ids) => ids?.every((id) => id === second))).toBe(true);
    expect(await resolver.resolveSigned!(url)).toBe(first);
  } finally {
    await resolver.close();
  }
});
