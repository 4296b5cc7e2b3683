/**
 * The store part of creates safe to retry (store/idempotency-keys.ts, and the create tickets
 * the keys bind to), on SQLite and PostgreSQL: one holder of a key among concurrent claims,
 * keys per team, a key kept once it made a sandbox and free again when its create failed,
 * one taker of a key whose holder is gone, and expiry after a day.
 */
import type { Team } from "../../src/model/team.js";
import { DIALECTS, freshStore, type TestStore } from "../helpers/stores.js";

const LEASE_MS = 15_000;

describe.each(DIALECTS)("Idempotency-Keys on %s", (dialect) => {
  let t: TestStore;
  let team: Team;
  let other: Team;
  let n = 0;
  /** A key no other test uses. */
  const fresh = () => `key-${dialect}-${++n}`;
  const claim = (key: string, ticket: string, requestHash = "hash-a", teamId = team.id) =>
    t.store.idempotencyKeys.claim({ teamId, key, requestHash, ticket, leaseMs: LEASE_MS });

  beforeAll(async () => {
    t = await freshStore(dialect);
    team = await t.store.teams.createTeam("Keys", "keys");
    other = await t.store.teams.createTeam("Other", "other-keys");
  });
  afterAll(async () => {
    await t.cleanup();
  });

  it("lets one of many concurrent claims of a key hold it, and shows the others who does", async () => {
    const key = fresh();
    const tickets = Array.from({ length: 12 }, (_, i) => `ticket-${i}`);
    const claims = await Promise.all(tickets.map((ticket) => claim(key, ticket)));
    const holders = claims.flatMap((c, i) => (c.kind === "claimed" ? [tickets[i]] : []));
    expect(holders).toHaveLength(1);
    for (const c of claims) {
      if (c.kind === "claimed") continue;
      expect(c.record).toMatchObject({ teamId: team.id, key, requestHash: "hash-a", ticket: holders[0] });
      expect(c.record.sandboxId).toBeUndefined();
      expect(Date.parse(c.record.expiresAt) - Date.parse(c.record.createdAt)).toBe(24 * 3600_000);
    }
  });

  it("keeps keys per team: another team's key of the same text is its own", async () => {
    const key = fresh();
    expect((await claim(key, "t-mine")).kind).toBe("claimed");
    expect((await claim(key, "t-theirs", "hash-b", other.id)).kind).toBe("claimed");
    expect((await t.store.idempotencyKeys.get(other.id, key))?.requestHash).toBe("hash-b");
    expect((await t.store.idempotencyKeys.get(team.id, key))?.requestHash).toBe("hash-a");
  });

  it("binds a key to the sandbox its holder made, for good, and to nothing else", async () => {
    const key = fresh();
    await claim(key, "holder");
    const keys = t.store.idempotencyKeys;
    expect(await keys.finish(team.id, key, "not-the-holder", "sbx-wrong")).toBe(false);
    expect(await keys.finish(team.id, key, "holder", "sbx-1")).toBe(true);
    expect(await keys.finish(team.id, key, "holder", "sbx-2")).toBe(false);
    // made a sandbox: no release, renewal or take-over moves it
    expect(await keys.release(team.id, key, "holder")).toBe(false);
    expect(await keys.renew(team.id, key, "holder", LEASE_MS)).toBe(false);
    expect(await keys.takeOver(team.id, key, "holder", "taker", LEASE_MS)).toBe(false);
    const again = await claim(key, "retry");
    expect(again.kind === "held" && again.record.sandboxId).toBe("sbx-1");
  });

  it("frees the key of a create that failed, for the next claim", async () => {
    const key = fresh();
    await claim(key, "failed");
    const keys = t.store.idempotencyKeys;
    expect(await keys.release(team.id, key, "someone-else")).toBe(false);
    expect(await keys.release(team.id, key, "failed")).toBe(true);
    expect(await keys.get(team.id, key)).toBeUndefined();
    // and the next request may even come with another body
    expect((await claim(key, "next", "hash-b")).kind).toBe("claimed");
    expect((await keys.get(team.id, key))?.ticket).toBe("next");
  });

  it("renews the holder's lease only", async () => {
    const key = fresh();
    await claim(key, "holder");
    const keys = t.store.idempotencyKeys;
    const before = (await keys.get(team.id, key))!.leaseUntil;
    await new Promise((r) => setTimeout(r, 5));
    expect(await keys.renew(team.id, key, "holder", 60_000)).toBe(true);
    const after = (await keys.get(team.id, key))!.leaseUntil;
    expect(Date.parse(after)).toBeGreaterThan(Date.parse(before));
    expect(await keys.renew(team.id, key, "other", 60_000)).toBe(false);
  });

  it("hands a gone holder's key to exactly one of the callers taking it over", async () => {
    const key = fresh();
    await claim(key, "gone");
    const takers = Array.from({ length: 8 }, (_, i) => `taker-${i}`);
    const took = await Promise.all(
      takers.map((to) => t.store.idempotencyKeys.takeOver(team.id, key, "gone", to, LEASE_MS)),
    );
    expect(took.filter(Boolean)).toHaveLength(1);
    const winner = takers[took.indexOf(true)];
    expect((await t.store.idempotencyKeys.get(team.id, key))?.ticket).toBe(winner);
    // from a ticket that no longer holds it: nothing
    expect(await t.store.idempotencyKeys.takeOver(team.id, key, "gone", "late", LEASE_MS)).toBe(false);
  });

  it("frees a key after a day, and sweeps it", async () => {
    const key = fresh();
    const swept = fresh();
    await claim(key, "old");
    await claim(swept, "old-too");
    await t.store.idempotencyKeys.finish(team.id, key, "old", "sbx-old");
    const dayAgo = new Date(Date.now() - 24 * 3600_000 - 1000).toISOString();
    await t.store.db.kysely
      .updateTable("idempotency_keys")
      .set({ created_at: dayAgo, expires_at: new Date(Date.now() - 1000).toISOString() })
      .where("team_id", "=", team.id)
      .where("key", "in", [key, swept])
      .execute();
    expect(await t.store.idempotencyKeys.get(team.id, key)).toBeUndefined();
    // the same key makes a new sandbox now
    expect((await claim(key, "new")).kind).toBe("claimed");
    expect((await t.store.idempotencyKeys.get(team.id, key))?.sandboxId).toBeUndefined();
    expect(await t.store.idempotencyKeys.sweep()).toBe(1);
    const left = await t.store.db.kysely
      .selectFrom("idempotency_keys")
      .select("key")
      .where("key", "in", [key, swept])
      .execute();
    expect(left.map((r) => r.key)).toEqual([key]);
  });

  describe("bound to create tickets", () => {
    const tickets = () => t.store.createTickets;

    it("keeps the sandbox a settled ticket finished, when its holder did not record it", async () => {
      const key = fresh();
      const ticket = await tickets().issue(team.id, t.store.nodeId);
      await claim(key, ticket);
      expect(await tickets().claim(ticket, team.id, t.store.nodeId, "sbx-settled")).toBe(true);
      expect(await tickets().confirm(ticket, "sbx-settled")).toBe(true);
      expect(await tickets().get(ticket)).toEqual({ sandboxId: "sbx-settled", done: true });
      await tickets().settle(ticket);
      expect(await tickets().get(ticket)).toBeUndefined();
      expect((await t.store.idempotencyKeys.get(team.id, key))?.sandboxId).toBe("sbx-settled");
    });

    it("frees the key of a ticket settled or called off before it finished a sandbox", async () => {
      const settledKey = fresh();
      const settled = await tickets().issue(team.id, t.store.nodeId);
      await claim(settledKey, settled);
      await tickets().claim(settled, team.id, t.store.nodeId, "sbx-unfinished");
      await tickets().settle(settled);
      expect(await t.store.idempotencyKeys.get(team.id, settledKey)).toBeUndefined();

      const abandonedKey = fresh();
      const abandoned = await tickets().issue(team.id, t.store.nodeId);
      await claim(abandonedKey, abandoned);
      await tickets().claim(abandoned, team.id, t.store.nodeId, "sbx-called-off");
      expect(await tickets().abandon(abandoned)).toEqual({ abandoned: true, sandboxId: "sbx-called-off" });
      expect(await t.store.idempotencyKeys.get(team.id, abandonedKey)).toBeUndefined();
    });

    it("leaves the key of a finished ticket that could not be called off", async () => {
      const key = fresh();
      const ticket = await tickets().issue(team.id, t.store.nodeId);
      await claim(key, ticket);
      await tickets().claim(ticket, team.id, t.store.nodeId, "sbx-done");
      await tickets().confirm(ticket, "sbx-done");
      expect(await tickets().abandon(ticket)).toEqual({ abandoned: false, sandboxId: "sbx-done" });
      expect((await t.store.idempotencyKeys.get(team.id, key))?.ticket).toBe(ticket);
    });
  });
});
