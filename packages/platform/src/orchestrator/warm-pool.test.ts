import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { silentLogger } from "../lib/log.js";
import { DomainError } from "../model/errors.js";
import { NORMAL_SHARES, STOCK_SHARES } from "../sandbox/cpu-fairness.js";
import type { BootSpec, SandboxHost } from "../sandbox/sandbox-host.js";
import { BootBudget } from "./boot-budget.js";
import { type PoolKey, WarmPool } from "./warm-pool.js";

/** A host whose boots take `bootMs` and are counted, with nothing real behind them. */
function fakeHost(bootMs = 20) {
  const state = {
    booting: 0,
    maxBooting: 0,
    boots: 0,
    destroyed: [] as string[],
    fail: false,
    /** CPU weight of each member: as booted, then as set on hand-out (unset: the default). */
    shares: new Map<string, number | undefined>(),
  };
  const host = {
    boot: async (spec: BootSpec) => {
      state.boots++;
      state.shares.set(spec.id, spec.cpuShares);
      state.booting++;
      state.maxBooting = Math.max(state.maxBooting, state.booting);
      await new Promise((r) => setTimeout(r, bootMs));
      state.booting--;
      if (state.fail) throw new Error("boot failed");
      return `10.0.0.${state.boots}`;
    },
    destroy: async (ref: { id: string }) => {
      state.destroyed.push(ref.id);
    },
    weigh: async (ref: { id: string }, shares: number) => {
      state.shares.set(ref.id, shares);
    },
  } as unknown as SandboxHost;
  return { host, state };
}

const KEY: PoolKey = {
  templateId: "t",
  buildId: "b",
  runtime: "runc",
  specFor: (id, accessToken) => ({ id, accessToken, defaultUser: "user" }) as unknown as BootSpec,
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

  function makePool(o: { min: number; max: number; concurrent?: number; memory?: number; bootMs?: number }) {
    const { host, state } = fakeHost(o.bootMs);
    const budget = new BootBudget({
      concurrent: o.concurrent ?? 2,
      memoryReserveBytes: 100,
      availableMemory: async () => o.memory ?? 1000,
    });
    // stock members run a warm-up command through envd, which a fake host has not: boot for creates only
    pool = new WarmPool({ min: o.min, max: o.max, host, budget, recordDir: dir, log: silentLogger });
    return { pool, state };
  }

  it("gives each create of a burst its own member, booting within the budget, in arrival order", async () => {
    const { pool, state } = makePool({ min: 0, max: 0, concurrent: 3 });
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
    expect(state.boots).toBe(10);
    expect(state.maxBooting).toBe(3);
    // booted for a create: the default weight from the start
    for (const m of members) expect(state.shares.get(m.id)).toBeUndefined();
    expect(order).toEqual([...order].sort((a, b) => a - b));
    // nothing is kept when the pool keeps none: the records of handed-over members go
    for (const m of members) await pool.handedOver(m);
    expect(readdirSync(dir)).toEqual([]);
  });

  it("raises its target on each miss, up to the maximum, and never boots a member nobody gets", async () => {
    const { pool, state } = makePool({ min: 0, max: 3 });
    await Promise.all([pool.take(KEY), pool.take(KEY)]);
    expect(pool.stats()[0]).toMatchObject({ misses: 2, target: 2 });
    await pool.whenFull(5_000);
    expect(pool.stats()[0]).toMatchObject({ ready: 2, target: 2 });
    // stock boots yield the CPU to sandboxes in use until they are handed out
    expect([...state.shares.values()].filter((shares) => shares === STOCK_SHARES).length).toBeGreaterThan(0);
    const hit = await pool.take(KEY);
    expect(hit.fromStock).toBe(true);
    expect(state.shares.get(hit.id)).toBe(NORMAL_SHARES);
    expect(pool.stats()[0]).toMatchObject({ hits: 1 });
    // four more at once: one ready, three booted for their creates, target capped at 3
    await Promise.all(Array.from({ length: 4 }, () => pool.take(KEY)));
    expect(pool.stats()[0]!.target).toBe(3);
    await pool.whenFull(5_000);
    const stats = pool.stats()[0]!;
    expect(stats).toMatchObject({ ready: 3, booting: 0, waiting: 0, hits: 2, misses: 5 });
    // every boot went to a create or is in stock: none was wasted
    expect(state.boots).toBe(stats.hits + stats.misses + stats.ready);
    expect(state.destroyed).toEqual([]);
  });

  it("gives back members above its minimum when nobody takes any", async () => {
    const { host } = fakeHost(5);
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
    await pool.whenFull(5_000);
    await new Promise((r) => setTimeout(r, 1500));
    expect(pool.stats()[0]).toMatchObject({ target: 1, ready: 1 });
  });

  it("refuses at once with 503 when the host has no memory left, and fails a create whose boot fails", async () => {
    const low = makePool({ min: 0, max: 0, memory: 50 });
    const refused = await low.pool.take(KEY).catch((err: unknown) => err);
    expect(refused).toBeInstanceOf(DomainError);
    expect((refused as DomainError).code).toBe("unavailable");
    expect(low.state.boots).toBe(0);
    await low.pool.close();

    const broken = makePool({ min: 0, max: 0 });
    broken.state.fail = true;
    await expect(broken.pool.take(KEY)).rejects.toThrow(/boot failed/);
    expect(broken.state.destroyed).toHaveLength(1);
  });
});
