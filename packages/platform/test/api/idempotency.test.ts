/**
 * Creates under an Idempotency-Key over HTTP against a real platform (runc sandboxes), on
 * SQLite and on PostgreSQL: a key answers every request with the one sandbox it made (sent
 * again, sent at once), another body or the other create operation with it is 422, a key that
 * is not one is 400, keys are per team, and a create that failed leaves its key to the retry.
 */
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

describe.each(DIALECTS)("creates with an Idempotency-Key on %s", (dialect) => {
  let api: ApiPlatform;
  /** Sandboxes to kill at the end, with the key of the team that owns them. */
  const made = new Map<string, string | undefined>();
  let n = 0;
  const fresh = () => `api-${dialect}-${++n}-${Date.now()}`;

  const create = async (
    key: string,
    body: Record<string, unknown> = {},
    o: { path?: string; apiKey?: string } = {},
  ) => {
    const res = await api.request("POST", o.path ?? "/v2/sandboxes", {
      body: { templateID: "base", timeout: 120, metadata: { suite: "idempotency" }, ...body },
      headers: { "Idempotency-Key": key },
      key: o.apiKey,
    });
    if (res.status === 201) made.set(res.body.sandboxID, o.apiKey);
    return res;
  };

  /** The team's sandboxes this suite made that are not killed. */
  const live = async (apiKey?: string): Promise<string[]> => {
    const res = await api.request("GET", "/v2/sandboxes?metadata=suite%3Didempotency", { key: apiKey });
    expect(res.status).toBe(200);
    return res.body.map((s: { sandboxID: string }) => s.sandboxID).sort();
  };

  beforeAll(async () => {
    api = await startApiPlatform(dialect);
  });

  afterAll(async () => {
    for (const [id, key] of made) await api?.request("DELETE", `/sandboxes/${id}`, { key });
    await api?.stop();
  });

  it("answers a key sent again with the sandbox it made, tokens and all", async () => {
    const key = fresh();
    const first = await create(key);
    expect(first.status).toBe(201);
    const again = await create(key);
    expect(again.status).toBe(201);
    expect(again.body).toEqual(first.body);
    expect(await live()).toEqual([first.body.sandboxID]);
    // the sandbox answers: its token is the one the retry got
    const info = await api.request("GET", `/sandboxes/${first.body.sandboxID}`);
    expect(info.body.envdAccessToken).toBe(again.body.envdAccessToken);
    await api.request("DELETE", `/sandboxes/${first.body.sandboxID}`);
    // within the day the key keeps answering with its sandbox, killed as it now is
    const late = await create(key);
    expect(late.status).toBe(201);
    expect(late.body.sandboxID).toBe(first.body.sandboxID);
    expect(await live()).toEqual([]);
  });

  it("makes one sandbox of requests sent at once with one key", async () => {
    const key = fresh();
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(key)));
    expect(answers.map((a) => a.status)).toEqual(Array(6).fill(201));
    const ids = new Set(answers.map((a) => a.body.sandboxID));
    expect(ids.size).toBe(1);
    expect(await live()).toEqual([...ids]);
    for (const a of answers) expect(a.body).toEqual(answers[0]!.body);
    for (const id of ids) await api.request("DELETE", `/sandboxes/${id}`);
  });

  it("refuses a used key with another body, or on the other create, with 422", async () => {
    const key = fresh();
    const first = await create(key, { metadata: { suite: "idempotency", n: "1" } });
    expect(first.status).toBe(201);
    const other = await create(key, { metadata: { suite: "idempotency", n: "2" } });
    expect(other.status).toBe(422);
    expect(other.body).toEqual({
      code: 422,
      message: `Idempotency-Key '${key}' was used by your team within the last 24 hours for another request (a different body or endpoint): send that request again to get its sandbox, or use a new key for a new sandbox`,
    });
    const legacy = await create(key, { metadata: { suite: "idempotency", n: "1" } }, { path: "/sandboxes" });
    expect(legacy.status).toBe(422);
    expect(await live()).toEqual([first.body.sandboxID]);
    await api.request("DELETE", `/sandboxes/${first.body.sandboxID}`);
  });

  it("refuses what is no key with 400", async () => {
    for (const bad of ["has space", "x".repeat(256), "ünïcode"]) {
      const res = await api.request("POST", "/v2/sandboxes", {
        body: { templateID: "base" },
        headers: { "Idempotency-Key": bad },
      });
      expect(res.status).toBe(400);
      expect(res.body.message).toMatch(/^parameter\.Idempotency-Key /);
    }
    expect(await live()).toEqual([]);
  });

  it("keeps keys per team: the same key from another team makes that team's own sandbox", async () => {
    const key = fresh();
    const mine = await create(key);
    const theirs = await create(key, {}, { apiKey: api.other.key });
    expect(mine.status).toBe(201);
    expect(theirs.status).toBe(201);
    expect(theirs.body.sandboxID).not.toBe(mine.body.sandboxID);
    expect(await live(api.other.key)).toEqual([theirs.body.sandboxID]);
    await api.request("DELETE", `/sandboxes/${mine.body.sandboxID}`);
    await api.request("DELETE", `/sandboxes/${theirs.body.sandboxID}`, { key: api.other.key });
  });

  it("lets a create that failed be tried again with its key", async () => {
    const key = fresh();
    const failed = await create(key, { templateID: "no-such-template" });
    expect(failed.status).toBe(404);
    // the same request fails again (nothing of the first is kept)
    expect((await create(key, { templateID: "no-such-template" })).status).toBe(404);
    // the key bound nothing: it may make a sandbox now, whatever the body
    const fixed = await create(key);
    expect(fixed.status).toBe(201);
    expect((await create(key)).body.sandboxID).toBe(fixed.body.sandboxID);
    await api.request("DELETE", `/sandboxes/${fixed.body.sandboxID}`);
  });

  it("leaves creates without a key as they were: each makes its own", async () => {
    const one = await api.request("POST", "/v2/sandboxes", {
      body: { templateID: "base", metadata: { suite: "idempotency" } },
    });
    const two = await api.request("POST", "/v2/sandboxes", {
      body: { templateID: "base", metadata: { suite: "idempotency" } },
    });
    for (const r of [one, two]) made.set(r.body.sandboxID, undefined);
    expect(one.body.sandboxID).not.toBe(two.body.sandboxID);
    for (const r of [one, two]) await api.request("DELETE", `/sandboxes/${r.body.sandboxID}`);
  });
});
