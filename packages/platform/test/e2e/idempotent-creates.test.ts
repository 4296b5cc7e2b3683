/**
 * Retry drills of creates under an Idempotency-Key, through the real processes: `x serve`, and
 * a cluster of two `x node`s and two `x api`s on one PostgreSQL catalog. The same key sent
 * again and sent at once (the raw API and the public e2b client with the key in its
 * `apiHeaders`) makes one sandbox; a platform that dies holding the key leaves the retry one
 * sandbox too: `x serve` SIGKILLed in the middle of the create and started again, a node
 * SIGKILLed in the middle of it while a request with the same key waits on it through the
 * other api.
 */
import { randomUUID } from "node:crypto";
import { Sandbox } from "e2b";
import { pointE2bClient } from "../helpers/platform.js";
import { waitFor, XCluster } from "../helpers/x-cluster.js";
import { XServe } from "../helpers/x-serve.js";

interface Answer {
  status: number;
  // biome-ignore lint/suspicious/noExplicitAny: the drills read answers loosely
  body: any;
}

/** POST /v2/sandboxes at `apiUrl` with the key; a connection the api cut is status 0. */
async function createAt(apiUrl: string, apiKey: string, key: string, metadata: Record<string, string>) {
  const res = await fetch(`${apiUrl}/v2/sandboxes`, {
    method: "POST",
    headers: { "X-API-Key": apiKey, "Content-Type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify({ templateID: "base", timeout: 600, metadata }),
  }).catch((err: Error) => ({ status: 0, text: async () => JSON.stringify({ message: err.message }) }));
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : undefined } as Answer;
}

/** The ids of a team's sandboxes with these metadata that are not killed, through `apiUrl`. */
async function liveWith(apiUrl: string, apiKey: string, metadata: Record<string, string>) {
  const query = encodeURIComponent(new URLSearchParams(metadata).toString());
  const res = await fetch(`${apiUrl}/v2/sandboxes?metadata=${query}`, { headers: { "X-API-Key": apiKey } });
  expect(res.status).toBe(200);
  return ((await res.json()) as Array<{ sandboxID: string }>).map((s) => s.sandboxID).sort();
}

describe("creates under an Idempotency-Key through x serve", () => {
  // made in beforeAll, so that a run that skips these tests leaves nothing of them
  let x: XServe;
  let restoreEnv = () => {};
  const made = new Set<string>();

  beforeAll(async () => {
    x = new XServe(["--runtime", "runc", "--pool-size", "1"]);
    await x.start();
    restoreEnv = pointE2bClient(x);
  }, 120_000);

  afterAll(async () => {
    restoreEnv();
    if (x && !x.ended)
      for (const id of made) await x.api("DELETE", `/sandboxes/${id}`).catch(() => undefined);
    await x?.cleanup();
  }, 120_000);

  it("makes one sandbox of one key sent twice, then at once, raw and through the e2b client", async () => {
    const metadata = { drill: "serve-retry" };
    const key = randomUUID();
    const first = await createAt(x.apiUrl, x.apiKey, key, metadata);
    expect(first.status).toBe(201);
    made.add(first.body.sandboxID);
    const again = await createAt(x.apiUrl, x.apiKey, key, metadata);
    expect(again).toEqual(first);

    // another key, sent at once: six raw requests and two of the public client's creates
    const other = randomUUID();
    const raw = Promise.all(Array.from({ length: 6 }, () => createAt(x.apiUrl, x.apiKey, other, metadata)));
    // the client's body differs from the raw one (its own timeout and fields): a key of its own
    const clientKey = randomUUID();
    const viaClient = Promise.all(
      Array.from({ length: 2 }, () =>
        Sandbox.create({ metadata, timeoutMs: 600_000, apiHeaders: { "Idempotency-Key": clientKey } }),
      ),
    );
    const [answers, sandboxes] = await Promise.all([raw, viaClient]);
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    expect(new Set(answers.map((a) => a.body.sandboxID)).size).toBe(1);
    for (const a of answers) made.add(a.body.sandboxID);
    expect(sandboxes[1]!.sandboxId).toBe(sandboxes[0]!.sandboxId);
    made.add(sandboxes[0]!.sandboxId);
    // the one the client got works, with the token both got
    expect((await sandboxes[1]!.commands.run("echo once")).stdout).toBe("once\n");

    expect(await liveWith(x.apiUrl, x.apiKey, metadata)).toEqual(
      [first.body.sandboxID, answers[0]!.body.sandboxID, sandboxes[0]!.sandboxId].sort(),
    );
    for (const id of made) expect((await x.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    made.clear();
  }, 120_000);

  it("x serve killed holding the key in the middle of the create: the retry after its restart makes the one sandbox", async () => {
    const metadata = { drill: "serve-crash" };
    const key = randomUUID();
    await x.kill("SIGTERM");
    await x.start({ X_TEST_CRASH_AT: "create:started" });
    const cut = await createAt(x.apiUrl, x.apiKey, key, metadata);
    expect(cut.status).toBe(0);
    expect(await waitFor(async () => x.ended, Boolean, 10_000)).toBe(true);
    await x.cleanupDone();
    await x.start();

    // the key's holder is gone: once its lease runs out (15 s) the retry calls its create off and makes one
    const retried = await createAt(x.apiUrl, x.apiKey, key, metadata);
    expect(retried.status).toBe(201);
    made.add(retried.body.sandboxID);
    expect(await liveWith(x.apiUrl, x.apiKey, metadata)).toEqual([retried.body.sandboxID]);
    expect((await createAt(x.apiUrl, x.apiKey, key, metadata)).body.sandboxID).toBe(retried.body.sandboxID);
    expect(x.output).toMatch(
      /the create holding an Idempotency-Key stopped answering: called off, and made again/,
    );
    expect((await x.api("DELETE", `/sandboxes/${retried.body.sandboxID}`)).status).toBe(204);
    made.clear();
  }, 120_000);
});

describe("creates under an Idempotency-Key through two apis of a cluster", () => {
  let c: XCluster;
  const n2 = () => c.node("n2");
  const made = new Set<string>();
  let failed = false;
  const noting = (fn: () => Promise<void>) => async () => {
    try {
      await fn();
    } catch (err) {
      failed = true;
      throw err;
    }
  };
  const A = () => c.apis[0]!.url;
  const B = () => c.apis[1]!.url;
  const keyed = (at: string, key: string, metadata: Record<string, string>) =>
    createAt(at, c.apiKey, key, metadata);

  beforeAll(
    noting(async () => {
      c = new XCluster({
        nodes: 2,
        apis: 2,
        proxies: 1,
        // cold creates: a request with the key has time to come while another makes its sandbox
        nodeFlags: ["--runtime", "runc", "--pool-size", "0", "--dns-upstream", "none"],
      });
      await c.start();
    }),
    300_000,
  );

  afterAll(async () => {
    if (!c) return;
    const api = c.apis.find((a) => !a.ended);
    if (api && c.apiKey)
      for (const id of made)
        await fetch(`${api.url}/sandboxes/${id}`, {
          method: "DELETE",
          headers: { "X-API-Key": c.apiKey },
        }).catch(() => undefined);
    await c.cleanup({ keepLogs: failed });
  }, 120_000);

  it(
    "makes one sandbox of one key sent through api A, then api B, then through both at once",
    noting(async () => {
      const metadata = { drill: "cluster-retry" };
      const key = randomUUID();
      const first = await keyed(A(), key, metadata);
      expect(first.status).toBe(201);
      made.add(first.body.sandboxID);
      expect(await keyed(B(), key, metadata)).toEqual(first);

      const other = randomUUID();
      const answers = await Promise.all(
        Array.from({ length: 8 }, (_, i) => keyed(i % 2 ? A() : B(), other, metadata)),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
      const ids = new Set(answers.map((a) => a.body.sandboxID));
      expect(ids.size).toBe(1);
      for (const id of ids) made.add(id);
      for (const a of answers) expect(a.body).toEqual(answers[0]!.body);

      expect(await liveWith(B(), c.apiKey, metadata)).toEqual([first.body.sandboxID, ...ids].sort());
      const rows = await c.query<{ key: string; sandbox_id: string }>(
        "select key, sandbox_id from idempotency_keys where key = any($1) order by key",
        [[key, other]],
      );
      expect(rows.map((r) => [r.key, r.sandbox_id])).toEqual(
        [
          [key, first.body.sandboxID],
          [other, [...ids][0]],
        ].sort(),
      );
      // every ticket settled
      expect(await c.query("select key from create_tickets")).toEqual([]);
      // the sandbox is real, on whichever node, through the proxy
      const sandbox = await Sandbox.connect([...ids][0]!, c.client(0, 0));
      expect((await sandbox.commands.run("echo one of eight")).stdout).toBe("one of eight\n");
      for (const id of made) expect(await Sandbox.kill(id, c.client(1, 0))).toBe(true);
      made.clear();
    }),
    120_000,
  );

  it(
    "a node killed holding the key while the same key waits on it through the other api: the retries make the one sandbox",
    noting(async () => {
      const metadata = { drill: "cluster-crash" };
      const key = randomUUID();
      // n2 alone takes creates, and SIGKILLs itself once it has begun the sandbox
      await c.only("n2");
      let holder: Answer;
      let waiter: Answer;
      try {
        await n2().kill("SIGTERM");
        await n2().start(60_000, { X_TEST_CRASH_AT: "create:started" });
        [holder, waiter] = await Promise.all([
          keyed(A(), key, metadata),
          // the same key a moment later through api B: it waits on n2's create
          new Promise<Answer>((r) => setTimeout(() => r(keyed(B(), key, metadata)), 20)),
        ]);
      } finally {
        await c.undrainAll(); // n1; n2 is dead
      }
      expect(await waitFor(async () => n2().ended, Boolean, 10_000)).toBe(true);
      // both told the truth: the node failed with their create, and a create again makes one
      for (const answer of [holder, waiter]) {
        expect(answer.status).toBe(502);
        expect(answer.body.message).toMatch(/node n2 failed after it received this create/);
        expect(answer.body.message).toMatch(/creating again makes one sandbox/);
      }
      const begun = await c.query<{ id: string; state: string }>(
        "select id, state from sandboxes where node_id = 'n2' and reason like 'its create was called off%'",
      );
      expect(begun.map((b) => b.state)).toEqual(["killed"]);

      // both retry at once, through both apis, with the key (503 while n2 still looks alive)
      const retry = async (at: string): Promise<Answer> => {
        for (let attempt = 0; ; attempt++) {
          const answer = await keyed(at, key, metadata);
          if (answer.status !== 503 || attempt >= 10) return answer;
          await new Promise((r) => setTimeout(r, 2000));
        }
      };
      const [one, two] = await Promise.all([retry(A()), retry(B())]);
      expect([one.status, two.status]).toEqual([201, 201]);
      expect(two.body).toEqual(one.body);
      made.add(one.body.sandboxID);
      expect(await c.nodeOf(one.body.sandboxID)).toBe("n1");
      expect(await liveWith(A(), c.apiKey, metadata)).toEqual([one.body.sandboxID]);

      // n2 back: it adopts none of what it began, and the key still answers with the one
      await n2().start(60_000);
      expect(await liveWith(B(), c.apiKey, metadata)).toEqual([one.body.sandboxID]);
      expect((await keyed(B(), key, metadata)).body.sandboxID).toBe(one.body.sandboxID);
      const sandbox = await Sandbox.connect(one.body.sandboxID, c.client(1, 0));
      expect((await sandbox.commands.run("echo the one")).stdout).toBe("the one\n");
      await sandbox.kill();
      made.clear();
    }),
    240_000,
  );
});
