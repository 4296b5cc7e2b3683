/**
 * Creates under an Idempotency-Key over a real store (SQLite in a temp dir), with attempts that
 * stand in for the orchestrator's create and hold their tickets as it does: one attempt among
 * concurrent requests, the same answer for all, a failed attempt leaving the key to the next,
 * a different request refused, and a holder that died replaced (called off, made again) or
 * taken at its word when its create had finished.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { newSandboxId } from "../lib/ids.js";
import { silentLogger } from "../lib/log.js";
import { DomainError } from "../model/errors.js";
import type { Team } from "../model/team.js";
import { openStore, type Store } from "../store/index.js";
import { fakeSealer } from "../store/testing/fake-sealer.js";
import { IdempotentCreates, type OnceRequest, requestHashOf } from "./idempotent-create.js";

let dir: string;
let store: Store;
let team: Team;
let creates: IdempotentCreates;
let n = 0;

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "x-idempotent-"));
  store = await openStore({ dataDir: dir, sealer: fakeSealer() });
  await store.teams.ensureFirstTeam();
  team = await store.teams.defaultTeam();
  creates = new IdempotentCreates({ store, log: silentLogger, leaseMs: 300, maxWaitMs: 5_000 });
});

afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Attempts as the orchestrator makes them: the ticket claimed with the sandbox's id, then confirmed. */
function attempts(o: { ms?: number; fail?: (i: number) => boolean } = {}) {
  const made: string[] = [];
  let calls = 0;
  const attempt = async (ticket: string) => {
    const i = calls++;
    const sandboxId = newSandboxId();
    if (!(await store.createTickets.claim(ticket, team.id, store.nodeId, sandboxId)))
      throw new Error("called off");
    await sleep(o.ms ?? 50);
    if (o.fail?.(i)) throw new DomainError("quota", `attempt ${i} failed`);
    if (!(await store.createTickets.confirm(ticket, sandboxId))) throw new Error("called off");
    made.push(sandboxId);
    return { sandboxId, answer: { sandboxID: sandboxId, made: true } };
  };
  return {
    made,
    get calls() {
      return calls;
    },
    request: (key: string, body: unknown = { templateID: "base" }): OnceRequest<unknown> => ({
      team,
      key,
      requestHash: requestHashOf("createSandbox", body),
      attempt,
      replay: async (sandboxId) => ({ sandboxID: sandboxId, made: false }),
      endCalledOff: async (sandboxId) => {
        ended.push(sandboxId);
      },
    }),
  };
}
const ended: string[] = [];
const fresh = () => `unit-${++n}`;

it("hashes the request whatever the order of its fields, and tells operations apart", () => {
  const a = requestHashOf("createSandbox", { templateID: "base", metadata: { a: "1", b: "2" } });
  expect(requestHashOf("createSandbox", { metadata: { b: "2", a: "1" }, templateID: "base" })).toBe(a);
  expect(requestHashOf("createSandbox", { templateID: "base", metadata: { a: "1", b: "3" } })).not.toBe(a);
  expect(requestHashOf("createSandboxLegacy", { templateID: "base", metadata: { a: "1", b: "2" } })).not.toBe(
    a,
  );
});

it("makes one sandbox for concurrent requests with one key, and answers each with it", async () => {
  const key = fresh();
  const a = attempts({ ms: 200 });
  const answers = await Promise.all(Array.from({ length: 6 }, () => creates.once(a.request(key))));
  expect(a.calls).toBe(1);
  expect(a.made).toHaveLength(1);
  const ids = new Set(answers.map((x) => (x as { sandboxID: string }).sandboxID));
  expect([...ids]).toEqual(a.made);
  expect(answers.filter((x) => (x as { made: boolean }).made)).toHaveLength(1);
  // and later, the same
  expect(await creates.once(a.request(key))).toEqual({ sandboxID: a.made[0], made: false });
  expect(a.calls).toBe(1);
  // no ticket of its own is left behind
  expect(await store.db.kysely.selectFrom("create_tickets").selectAll().execute()).toEqual([]);
});

it("refuses the key with another body (422) and leaves its sandbox as it was", async () => {
  const key = fresh();
  const a = attempts();
  await creates.once(a.request(key));
  const refused = await creates.once(a.request(key, { templateID: "other" })).catch((e: unknown) => e);
  expect(refused).toBeInstanceOf(DomainError);
  expect((refused as DomainError).code).toBe("reused");
  expect((refused as DomainError).message).toContain(`Idempotency-Key '${key}' was used by your team`);
  expect(a.calls).toBe(1);
  expect((await store.idempotencyKeys.get(team.id, key))?.sandboxId).toBe(a.made[0]);
});

it("lets the key go when the attempt fails: a waiting request makes its own, and the rest get that", async () => {
  const key = fresh();
  const a = attempts({ ms: 150, fail: (i) => i === 0 });
  const results = await Promise.allSettled(Array.from({ length: 4 }, () => creates.once(a.request(key))));
  const failed = results.filter((r) => r.status === "rejected");
  expect(failed).toHaveLength(1);
  expect(((failed[0] as PromiseRejectedResult).reason as Error).message).toBe("attempt 0 failed");
  expect(a.calls).toBe(2);
  expect(a.made).toHaveLength(1);
  for (const r of results)
    if (r.status === "fulfilled") expect((r.value as { sandboxID: string }).sandboxID).toBe(a.made[0]);
});

it("a retry after a failure tries again", async () => {
  const key = fresh();
  const a = attempts({ fail: (i) => i === 0 });
  await expect(creates.once(a.request(key))).rejects.toThrow("attempt 0 failed");
  expect(await store.idempotencyKeys.get(team.id, key)).toBeUndefined();
  const second = (await creates.once(a.request(key))) as { sandboxID: string; made: boolean };
  expect(second).toEqual({ sandboxID: a.made[0], made: true });
});

/** A key held by an attempt that died after claiming its ticket (its lease runs out in 300 ms). */
async function heldByTheDead(key: string, o: { finished: boolean }) {
  const ticket = await store.createTickets.issue(team.id, store.nodeId);
  const claim = await store.idempotencyKeys.claim({
    teamId: team.id,
    key,
    requestHash: requestHashOf("createSandbox", { templateID: "base" }),
    ticket,
    leaseMs: 300,
  });
  expect(claim.kind).toBe("claimed");
  const sandboxId = newSandboxId();
  await store.createTickets.claim(ticket, team.id, store.nodeId, sandboxId);
  if (o.finished) await store.createTickets.confirm(ticket, sandboxId);
  return { ticket, sandboxId };
}

it("calls off the create of a holder that stopped renewing, and makes the sandbox anew", async () => {
  const key = fresh();
  const dead = await heldByTheDead(key, { finished: false });
  const a = attempts();
  const answer = (await creates.once(a.request(key))) as { sandboxID: string; made: boolean };
  expect(answer.made).toBe(true);
  expect(answer.sandboxID).not.toBe(dead.sandboxId);
  expect(ended).toContain(dead.sandboxId);
  // the dead holder's create could not finish now
  expect(await store.createTickets.confirm(dead.ticket, dead.sandboxId)).toBe(false);
  expect((await store.idempotencyKeys.get(team.id, key))?.sandboxId).toBe(answer.sandboxID);
});

it("answers with the sandbox a dead holder had finished, without making one", async () => {
  const key = fresh();
  const dead = await heldByTheDead(key, { finished: true });
  const a = attempts();
  expect(await creates.once(a.request(key))).toEqual({ sandboxID: dead.sandboxId, made: false });
  expect(a.calls).toBe(0);
  expect(ended).not.toContain(dead.sandboxId);
});

it("stops waiting for a holder that keeps at it, with a 409 that says to retry with the key", async () => {
  const key = fresh();
  const patient = new IdempotentCreates({ store, log: silentLogger, leaseMs: 60_000, maxWaitMs: 300 });
  const a = attempts({ ms: 1_000 });
  const first = patient.once(a.request(key));
  await sleep(50);
  const waited = await patient.once(a.request(key)).catch((e: unknown) => e);
  expect((waited as DomainError).code).toBe("conflict");
  expect((waited as DomainError).message).toMatch(
    /still being made by an earlier request: retry with the same key/,
  );
  await first;
  expect(a.calls).toBe(1);
});
