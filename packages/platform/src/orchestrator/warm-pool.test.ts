import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { silentLogger } from "../lib/log.js";
import { DomainError } from "../model/errors.js";
import { OPEN_EGRESS } from "../model/network.js";
import { NORMAL_SHARES, STOCK_SHARES } from "../sandbox/cpu-fairness.js";
import type { BootSpec } from "../sandbox/sandbox-host.js";
import { BootBudget } from "./boot-budget.js";
import { FakeSandboxHost } from "./testing/fake-host.js";
import { type PoolKey, WarmPool } from "./warm-pool.js";

/** A fake host whose boots take `bootMs`: concurrency is real, nothing is behind them. */
function fakeHost(bootMs = 20) {
  const host = new FakeSandboxHost();
  host.script.delay("boot", bootMs);
  return host;
}

/** Each member's CPU weight: as booted, then as set on hand-out (unset: the default). */
const sharesOf = (host: FakeSandboxHost, id: string) => host.sandboxes.get(id)?.cpuShares;

const KEY: PoolKey = {
  templateId: "t",
  buildId: "b",
  runtime: "runc",
  specFor: (id, accessToken): BootSpec => ({
    id,
    runtime: "runc",
    lowers: [],
    cpuCount: 1,
    memoryMB: 128,
    egress: OPEN_EGRESS,
    envdAccessToken: accessToken,
    defaultUser: "user",
  }),
};

describe("WarmPool", () => {
  let dir: string;
  let pool: WarmPool | undefined;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-pool-"));
  });
  afterEach(async () => {
    await pool?.close();
    pool = undefined;
    rmSync(dir, { recursive: true, force: true });
  });

  function makePool(o: {
    min: number;
    max: number;
    concurrent?: number;
    memory?: number;
    bootMs?: number;
    settleMs?: number;
  }) {
    const host = fakeHost(o.bootMs);
    const budget = new BootBudget({
      concurrent: o.concurrent ?? 2,
      memoryReserveBytes: 100,
      availableMemory: async () => o.memory ?? 1000,
    });
    // stock members run a warm-up command through envd, which a fake host has not: boot for creates only
    pool = new WarmPool({
      min: o.min,
      max: o.max,
      host,
      budget,
      recordDir: dir,
      log: silentLogger,
      settleMs: o.settleMs ?? 250,
    });
    return { pool, host };
  }

  it("gives each create of a burst its own member, booting within the budget, in arrival order", async () => {
    const { pool, host } = makePool({ min: 0, max: 0, concurrent: 3 });
    const order: number[] = [];
    const members = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        pool.take(KEY).then((m) => {
          order.push(i);
          return m;
        }),
      ),
    );
    expect(new Set(members.map((m) => m.id)).size).toBe(10);
    expect(members.every((m) => !m.fromStock)).toBe(true);
    expect(host.script.idsOf("boot")).toHaveLength(10);
    expect(host.script.mostAtOnceOf("boot")).toBe(3);
    // booted for a create: the default weight from the start
    for (const m of members) expect(sharesOf(host, m.id)).toBeUndefined();
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // nothing is kept when the pool keeps none: the records of handed-over members go
    for (const m of members) await pool.handedOver(m);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("raises its target on each miss, up to the maximum, and never boots a member nobody gets", async () => {
    const { pool, host } = makePool({ min: 0, max: 3 });
    await Promise.all([pool.take(KEY), pool.take(KEY)]);
    expect(pool.stats()[0]).toMatchObject({ misses: 2, target: 2 });
    await pool.whenFull(5_000);
    expect(pool.stats()[0]).toMatchObject({ ready: 2, target: 2 });
    // stock boots yield the CPU to sandboxes in use until they are handed out, and may take their time
    const stock = [...host.sandboxes.values()].filter((s) => s.cpuShares === STOCK_SHARES);
    expect(stock.length).toBeGreaterThan(0);
    expect(stock.every((s) => s.patience)).toBe(true);
    const hit = await pool.take(KEY);
    expect(hit.fromStock).toBe(true);
    expect(sharesOf(host, hit.id)).toBe(NORMAL_SHARES);
    expect(pool.stats()[0]).toMatchObject({ hits: 1 });
    // four more at once: one ready, three booted for their creates, target capped at 3
    await Promise.all(Array.from({ length: 4 }, () => pool.take(KEY)));
    expect(pool.stats()[0]!.target).toBe(3);
    // a boot someone waits for is never made to wait
    const forCreates = [...host.sandboxes.values()].filter((s) => s.cpuShares === undefined);
    expect(forCreates.length).toBeGreaterThan(0);
    expect(forCreates.some((s) => s.patience)).toBe(false);
    await pool.whenFull(5_000);
    const stats = pool.stats()[0]!;
    expect(stats).toMatchObject({ ready: 3, booting: 0, waiting: 0, hits: 2, misses: 5 });
    // every boot went to a create or is in stock: none was wasted
    expect(host.script.idsOf("boot")).toHaveLength(stats.hits + stats.misses + stats.ready);
    expect(host.script.idsOf("destroy")).toEqual([]);
  });

  it("refills after a lone create once its member has settled, and at once under demand", async () => {
    const { pool, host } = makePool({ min: 2, max: 2, bootMs: 5 });
    pool.want(KEY);
    await pool.whenFull(5_000);
    const boots = () => host.script.idsOf("boot").length;
    // a lone create, the other member still ready: no boot beside its first commands …
    await pool.take(KEY);
    await new Promise((r) => setTimeout(r, 100));
    expect(boots()).toBe(2);
    // … until the settle is over
    await pool.whenFull(5_000);
    expect(boots()).toBe(3);
    // demand: creates close together refill at once, and none finds the pool empty
    await new Promise((r) => setTimeout(r, 300));
    await pool.take(KEY);
    await pool.take(KEY);
    await new Promise((r) => setTimeout(r, 20));
    expect(boots()).toBe(5);
    await pool.whenFull(5_000);
    expect(pool.stats()[0]).toMatchObject({ ready: 2, hits: 3, misses: 0 });
  });

  it("hurries the stock boots under way when a create has to wait", async () => {
    const { pool, host } = makePool({ min: 1, max: 2, bootMs: 300 });
    pool.want(KEY);
    await new Promise((r) => setTimeout(r, 50));
    // the stock boot is under way, nothing is ready: this create waits, and gets it
    const member = await pool.take(KEY);
    expect(host.sandboxes.get(member.id)?.patience?.aborted).toBe(true);
    // boots started after it are patient again
    await pool.whenFull(5_000);
    const stock = [...host.sandboxes.values()].filter((s) => s.cpuShares === STOCK_SHARES);
    expect(stock.some((s) => s.patience && !s.patience.aborted)).toBe(true);
  });

  it("gives back members above its minimum when nobody takes any", async () => {
    const host = fakeHost(5);
    const budget = new BootBudget({ concurrent: 2, memoryReserveBytes: 0, availableMemory: async () => 1 });
    pool = new WarmPool({
      min: 1,
      max: 4,
      host,
      budget,
      recordDir: dir,
      log: silentLogger,
      idleShrinkMs: 300,
    });
    pool.want(KEY);
    await pool.whenFull(5_000);
    await Promise.all([pool.take(KEY), pool.take(KEY), pool.take(KEY)]);
    expect(pool.stats()[0]!.target).toBe(3);
    // a boot someone waits for is never made to wait
    const forCreates = [...host.sandboxes.values()].filter((s) => s.cpuShares === undefined);
    expect(forCreates.length).toBeGreaterThan(0);
    expect(forCreates.some((s) => s.patience)).toBe(false);
    await pool.whenFull(5_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(pool.stats()[0]).toMatchObject({ target: 1, ready: 1 });
  });

  /** A pool key of another build (and team). */
  const keyOf = (buildId: string, teamId?: string): PoolKey => ({
    ...KEY,
    buildId,
    ...(teamId ? { teamId } : {}),
  });
  const readyOf = (p: WarmPool, teamId: string) =>
    p.stats().reduce((n, s) => n + (s.teamId === teamId ? s.ready : 0), 0);
  /** Waits until `check` holds (the pool's work is asynchronous); fails after 5 s. */
  async function until(check: () => boolean): Promise<void> {
    for (const deadline = Date.now() + 5_000; !check(); await new Promise((r) => setTimeout(r, 10)))
      if (Date.now() > deadline) throw new Error("the condition did not come about within 5 s");
  }

  it("never lets one team's pools push out another team's", async () => {
    const { pool, host } = makePool({ min: 2, max: 2, bootMs: 5 });
    const kept = keyOf("b-of-team-b", "team-b");
    pool.want(kept);
    await pool.whenFull(5_000);
    const members = [...host.sandboxes.keys()];
    expect(members).toHaveLength(2);
    // team A uses builds of six templates of its own, one after another: more than its slots
    for (let i = 0; i < 6; i++) await pool.handedOver(await pool.take(keyOf(`a-${i}`, "team-a")));
    const pools = pool.stats();
    expect(pools.filter((p) => p.teamId === "team-a").length).toBeLessThanOrEqual(4);
    // team B's pool is still there, with the very members it had
    expect(pools.find((p) => p.buildId === kept.buildId)).toMatchObject({ ready: 2 });
    for (const id of members) expect(host.conditionOf(id)).toBe("running");
    expect(host.script.idsOf("destroy").filter((id) => members.includes(id))).toEqual([]);
  });

  it("keeps a team's stock, over all its pools, within its allowance, and never refuses a create for it", async () => {
    let allowance = 3;
    const host = fakeHost(5);
    const budget = new BootBudget({ concurrent: 2, memoryReserveBytes: 0, availableMemory: async () => 1 });
    pool = new WarmPool({
      min: 2,
      max: 2,
      host,
      budget,
      recordDir: dir,
      log: silentLogger,
      settleMs: 0,
      stockAllowance: async (teamId) => (teamId === "team-a" ? allowance : 0),
    });
    const first = keyOf("a-1", "team-a");
    const second = keyOf("a-2", "team-a");
    pool.want(first);
    pool.want(second);
    await pool.whenFull(5_000);
    // two pools of two each would be four: the team may have three kept for it
    expect(readyOf(pool, "team-a")).toBe(3);
    expect(host.script.idsOf("boot")).toHaveLength(3);
    // the team runs two more sandboxes now (its allowance is read again on the next use)
    allowance = 1;
    pool.want(first);
    // (a member leaves the pool's list before its destroy is called)
    await until(() => readyOf(pool!, "team-a") === 1 && host.script.idsOf("destroy").length >= 2);
    // stock went, none was booted for it
    expect(host.script.idsOf("destroy")).toHaveLength(2);
    expect(host.script.idsOf("boot")).toHaveLength(3);
    // a create of a pool the team has no room for gets a member all the same, booted for it
    allowance = 0;
    pool.want(second);
    await until(() => readyOf(pool!, "team-a") === 0);
    const member = await pool.take(second);
    expect(host.conditionOf(member.id)).toBe("running");
    // a team without any allowance has nothing kept for it
    pool.want(keyOf("c-1", "team-c"));
    await pool.whenFull(5_000);
    expect(readyOf(pool, "team-c")).toBe(0);
  });

  it("refuses at once with 503 when the host has no memory left, and fails a create whose boot fails", async () => {
    const low = makePool({ min: 0, max: 0, memory: 50 });
    const refused = await low.pool.take(KEY).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe("unavailable");
    expect(low.host.script.idsOf("boot")).toEqual([]);
    await low.pool.close();

    const broken = makePool({ min: 0, max: 0 });
    broken.host.script.failAlways("boot");
    await expect(broken.pool.take(KEY)).rejects.toThrow(/boot failed/);
    expect(broken.host.script.idsOf("destroy")).toHaveLength(1);
  });
});
