import { newSandboxId, newSecret } from "../lib/ids.js";
import type { RuntimeName } from "../model/sandbox.js";
import { NORMAL_SHARES, STOCK_SHARES } from "../sandbox/cpu-fairness.js";
import { discardPoolLeftovers, forgetMember, rememberMember } from "./warm-pool-records.js";
import type { PoolKey, PoolMember, PoolStats, WarmPoolOptions } from "./warm-pool-types.js";

export { discardPoolLeftovers } from "./warm-pool-records.js";
export type { PoolKey, PoolLimits, PoolMember, PoolStats, WarmPoolOptions } from "./warm-pool-types.js";

interface Waiter {
  resolve(member: PoolMember): void;
  reject(err: unknown): void;
}

interface Pool extends PoolKey {
  key: string;
  min: number;
  max: number;
  /** What demand says to keep ready, between min and max. */
  target: number;
  ready: PoolMember[];
  /** Creates waiting for the next member, oldest first. */
  waiters: Waiter[];
  /** Members booting (for waiters or for stock). */
  booting: number;
  lastTakeMs: number;
  /** When a create last took a member, ready or booted for it (demand's pace, for the settle). */
  lastHandOutMs: number;
  /** A refill put off while the member just handed out runs its first commands. */
  settle?: NodeJS.Timeout;
  hits: number;
  misses: number;
  /** After a failed boot, no refill for stock before this time. */
  retryAtMs: number;
  /** Given to stock boots, which may take their time; aborted when a create comes to wait. */
  patience: AbortController;
}

/** A failed boot waits this long before the pool refills again (no hot loop on a broken build). */
const RETRY_AFTER_MS = 10_000;

/**
 * After a create takes a ready member while others stay ready, the refill waits this long: a
 * runc boot's host work (network, mounts, the runtime's cgroups, envd starting) slows every
 * process on a small host for its first ~200 ms, CPU weights notwithstanding (a nice of 19 on
 * the host commands and cpu.idle on the member did not help), and the member just handed out
 * runs its first commands then. Measured with creates 300 ms apart: the TTI flow's probe took
 * 27 ms inside the sandbox with the refill beside it and 17 ms without; TTI p50 66 → 52 ms.
 * Not under gVisor: its TTI was no faster with the refill put off 250 or 600 ms (p50 438 and
 * 444 ms against 428), its boot being a second long and mostly its sentry's, at the member's
 * low weight. Creates closer together than this, or one that leaves nothing ready, refill at
 * once, so a burst never finds the pool empty because of the wait.
 */
const SETTLE_MS: Record<RuntimeName, number> = { runc: 250, runsc: 0 };

const keyOf = (buildId: string, runtime: RuntimeName) => `${buildId}/${runtime}`;

/**
 * Sandboxes for creates, per template build and runtime. A create takes a ready member when
 * there is one (it then only gets its identity: envd token, environment, metadata); otherwise
 * it waits for the next member of its pool to become ready, and the pool boots one for it: a
 * create never causes two boots and never waits behind a later one. Pools size themselves to
 * demand between a minimum and a maximum: every create that found none ready raises the target
 * by one; a pool that gave out nothing for a minute gives one back. Boots, for creates and for
 * stock, run concurrently within the host's boot budget (CPU and memory; see BootBudget).
 * With a maximum of 0 no member is kept: each create still gets its own, booted for it.
 *
 * Pools are a team's (the template's): each team has its own `maxPools` slots, so one team's
 * pools never push out another's, and a team's stock over all its pools stays within its
 * allowance (its limit of sandboxes less those it runs). Creates themselves are never refused
 * for the stock: a member taken stops being stock and becomes the team's sandbox.
 */
export class WarmPool {
  private readonly pools = new Map<string, Pool>();
  private closed = false;
  /** Boots under way, which close() waits for. */
  private readonly inflight = new Set<Promise<void>>();
  private readonly fullWaiters = new Set<() => void>();
  /** Members booted for stock, at the stock CPU weight until they are handed out. */
  private readonly yielding = new Set<string>();
  private readonly shrinkTimer: NodeJS.Timeout;
  /** Each team's stock allowance as last read (see `stockAllowance`); none read yet: no stock. */
  private readonly allowance = new Map<string, number>();

  constructor(private readonly o: WarmPoolOptions) {
    const idleMs = o.idleShrinkMs ?? 60_000;
    this.shrinkTimer = setInterval(
      () => {
        void this.shrinkIdle(idleMs);
        // a team's sandboxes end by themselves too: its allowance is read again now and then
        const teams = new Set([...this.pools.values()].flatMap((p) => p.teamId ?? []));
        for (const teamId of this.allowance.keys()) if (!teams.has(teamId)) this.allowance.delete(teamId);
        for (const teamId of teams) this.refreshAllowance(teamId);
      },
      Math.min(idleMs, 10_000),
    );
    this.shrinkTimer.unref();
  }

  /** Whether members are kept ready at all (a maximum above 0). */
  get enabled(): boolean {
    return this.o.max > 0 && !this.closed;
  }

  /** Keeps members of this build ready from now on (when enabled; a no-op for a known pool). */
  want(key: PoolKey): void {
    if (this.closed) return;
    const pool = this.poolOf(key);
    pool.lastTakeMs = Date.now();
    this.refill(pool);
    if (pool.teamId) this.refreshAllowance(pool.teamId);
  }

  /**
   * A member for a create: a ready one, or the next one to become ready (booted for this
   * create when none is on its way). Rejects when the host has no memory for another sandbox
   * or the boot fails.
   */
  async take(key: PoolKey): Promise<PoolMember> {
    if (this.closed) throw new Error("the platform is shutting down");
    const pool = this.poolOf(key);
    const previousHandOutMs = pool.lastHandOutMs;
    pool.lastTakeMs = pool.lastHandOutMs = Date.now();
    // the team is about to run one more: one less may be kept for it (read again on hand-over)
    const allowance = pool.teamId ? this.allowance.get(pool.teamId) : undefined;
    if (pool.teamId && allowance !== undefined) this.allowance.set(pool.teamId, allowance - 1);
    const member = pool.ready.shift();
    if (member) {
      pool.hits++;
      await this.fullWeight(member);
      this.refillAfterHandOut(pool, previousHandOutMs);
      return { ...member, fromStock: true };
    }
    pool.misses++;
    // demand outpaced what was kept: keep one more from now on, and the boots under way hurry
    pool.target = Math.min(pool.max, pool.target + 1);
    pool.patience.abort();
    pool.patience = new AbortController();
    await this.o.budget.checkMemory();
    const next = new Promise<PoolMember>((resolve, reject) => pool.waiters.push({ resolve, reject }));
    this.refill(pool);
    return next;
  }

  /** The taken member is on record as a sandbox now: the pool no longer answers for it. */
  async handedOver(member: PoolMember): Promise<void> {
    await forgetMember(this.o.recordDir, member.id);
    const teamId = this.pools.get(keyOf(member.buildId, member.runtime))?.teamId;
    if (teamId) this.refreshAllowance(teamId);
  }

  /** Resolves once every pool holds its target of ready members (or rejects after `timeoutMs`). */
  async whenFull(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.isFull()) {
      if (Date.now() > deadline) throw new Error(`the warm pool did not fill within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        this.fullWaiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  stats(): PoolStats[] {
    return [...this.pools.values()].map((p) => ({
      templateId: p.templateId,
      ...(p.teamId ? { teamId: p.teamId } : {}),
      buildId: p.buildId,
      runtime: p.runtime,
      ready: p.ready.length,
      booting: p.booting,
      waiting: p.waiters.length,
      target: p.target,
      min: p.min,
      max: p.max,
      hits: p.hits,
      misses: p.misses,
    }));
  }

  /** Drops the pools of a template (before its layers are removed). */
  async discardTemplate(templateId: string): Promise<void> {
    for (const pool of [...this.pools.values()]) {
      if (pool.templateId === templateId) await this.drop(pool);
    }
  }

  /** Stops refilling, fails creates still waiting and removes every ready member. */
  async close(): Promise<void> {
    this.closed = true;
    clearInterval(this.shrinkTimer);
    for (const pool of [...this.pools.values()]) await this.drop(pool);
    // boots still running end in deliver(), which removes their members now that we are closed
    await Promise.allSettled([...this.inflight]);
  }

  /** Removes members a previous process of this platform left behind (after a crash). */
  async discardLeftovers(): Promise<void> {
    await discardPoolLeftovers(this.o.recordDir, this.o.host, this.o.log);
  }

  private poolOf(key: PoolKey): Pool {
    const k = keyOf(key.buildId, key.runtime);
    let pool = this.pools.get(k);
    if (!pool) {
      const max = Math.max(0, key.limits?.max ?? this.o.max);
      const min = Math.min(max, Math.max(0, key.limits?.min ?? this.o.min));
      pool = {
        ...key,
        key: k,
        min,
        max,
        target: min,
        ready: [],
        waiters: [],
        booting: 0,
        lastTakeMs: Date.now(),
        lastHandOutMs: 0,
        hits: 0,
        misses: 0,
        retryAtMs: 0,
        patience: new AbortController(),
      };
      this.pools.set(k, pool);
      void this.evictBeyondLimit(pool.teamId);
    }
    return pool;
  }

  private isFull(): boolean {
    return [...this.pools.values()].every(
      (p) =>
        p.ready.length >= p.target ||
        p.retryAtMs > Date.now() ||
        // as full as the team's allowance lets it be (once the allowance is known)
        (this.stockBooting(p) === 0 && this.room(p) <= 0 && this.allowanceKnown(p)),
    );
  }

  /** Members booting for stock (not for a waiting create). */
  private stockBooting(pool: Pool): number {
    return Math.max(0, pool.booting - pool.waiters.length);
  }

  /** What the pool's team has kept for it, ready or booting, over all its pools. */
  private teamStock(teamId: string): number {
    let stock = 0;
    for (const p of this.pools.values())
      if (p.teamId === teamId) stock += p.ready.length + this.stockBooting(p);
    return stock;
  }

  /** How many more members the pool's team may have kept (negative: more than it may now). */
  private room(pool: Pool): number {
    if (!pool.teamId || !this.o.stockAllowance) return Number.POSITIVE_INFINITY;
    return (this.allowance.get(pool.teamId) ?? 0) - this.teamStock(pool.teamId);
  }

  private allowanceKnown(pool: Pool): boolean {
    return !pool.teamId || !this.o.stockAllowance || this.allowance.has(pool.teamId);
  }

  /**
   * Reads the team's allowance again; stock past it goes (ready members of the team's least
   * recently used pools first), room within it is filled.
   */
  private refreshAllowance(teamId: string): void {
    const allowanceOf = this.o.stockAllowance;
    if (!allowanceOf || this.closed) return;
    const done = allowanceOf(teamId).then(
      async (allowance) => {
        if (this.closed) return;
        this.allowance.set(teamId, allowance);
        const pools = [...this.pools.values()]
          .filter((p) => p.teamId === teamId)
          .sort((a, b) => a.lastTakeMs - b.lastTakeMs);
        let over = this.teamStock(teamId) - allowance;
        const extra: PoolMember[] = [];
        for (const pool of pools) {
          while (over > 0 && pool.ready.length > 0) {
            extra.push(pool.ready.pop()!);
            over--;
          }
        }
        for (const pool of pools) this.refill(pool);
        this.wakeFullWaiters();
        for (const member of extra) await this.destroy(member);
      },
      (err: unknown) => this.o.log.warn({ teamId, err }, "could not read a team's warm pool allowance"),
    );
    const tracked = done.finally(() => this.inflight.delete(tracked));
    this.inflight.add(tracked);
  }

  /** Refills after a hand-out: at once under demand, else once the member's first moments are over. */
  private refillAfterHandOut(pool: Pool, previousHandOutMs: number): void {
    const settleMs = this.o.settleMs ?? SETTLE_MS[pool.runtime];
    const lone = settleMs > 0 && pool.ready.length > 0 && Date.now() - previousHandOutMs >= settleMs;
    if (!lone) {
      this.refill(pool);
    } else if (!pool.settle) {
      pool.settle = setTimeout(() => this.refill(pool), settleMs);
      pool.settle.unref();
    }
  }

  /** Starts the boots the pool lacks: one per waiter not yet covered, then stock up to the target. */
  private refill(pool: Pool): void {
    clearTimeout(pool.settle);
    pool.settle = undefined;
    if (this.closed || this.pools.get(pool.key) !== pool) return;
    const forWaiters = pool.waiters.length - pool.booting;
    for (let i = 0; i < forWaiters; i++) this.boot(pool, true);
    if (pool.retryAtMs > Date.now()) return;
    const stockMissing = Math.min(pool.target - pool.ready.length - this.stockBooting(pool), this.room(pool));
    for (let i = 0; i < stockMissing; i++) this.boot(pool, false);
  }

  private boot(pool: Pool, forCreate: boolean): void {
    pool.booting++;
    const member: PoolMember = {
      id: newSandboxId(),
      runtime: pool.runtime,
      buildId: pool.buildId,
      address: "",
      accessToken: newSecret(),
      fromStock: !forCreate,
    };
    const t0 = performance.now();
    const done = this.o.budget
      .run(() => this.start(pool, member, forCreate), { urgent: forCreate })
      .then(
        () => {
          this.o.onBoot?.(pool.runtime, (performance.now() - t0) / 1000, true);
          this.o.log.debug(
            {
              sandboxId: member.id,
              buildId: pool.buildId,
              runtime: pool.runtime,
              bootMs: Math.round(performance.now() - t0),
            },
            "warm pool member ready",
          );
          // a member nobody wants any more is removed before the boot counts as done, so
          // close() does not return while its record is still on disk
          return this.deliver(pool, member);
        },
        (err: unknown) => {
          this.o.onBoot?.(pool.runtime, (performance.now() - t0) / 1000, false);
          // a boot cut short by the platform closing is no news
          this.o.log[this.closed ? "debug" : "warn"](
            { buildId: pool.buildId, runtime: pool.runtime, err },
            "warm pool member failed to boot",
          );
          pool.retryAtMs = Date.now() + RETRY_AFTER_MS;
          // the create this boot was for learns why; stock refills try again later
          if (forCreate) pool.waiters.shift()?.reject(err);
        },
      )
      .finally(() => {
        this.inflight.delete(done);
        pool.booting--;
        this.wakeFullWaiters();
        if (!this.closed && pool.retryAtMs > Date.now()) {
          setTimeout(() => this.refill(pool), pool.retryAtMs - Date.now()).unref();
        }
      });
    this.inflight.add(done);
  }

  /** Boots a member; one for stock is warmed up too (nobody waits for it). */
  private async start(pool: Pool, member: PoolMember, forCreate: boolean): Promise<void> {
    try {
      await rememberMember(this.o.recordDir, member);
      const spec = pool.specFor(member.id, member.accessToken);
      if (!forCreate) this.yielding.add(member.id);
      member.address = await this.o.host.boot(
        forCreate ? spec : { ...spec, cpuShares: STOCK_SHARES, patience: pool.patience.signal },
      );
      await pool.prepare?.(member);
      if (!forCreate) await this.o.warmUp?.(member, spec);
    } catch (err) {
      await this.destroy(member);
      throw err;
    }
  }

  /** A new member goes to the oldest waiting create, or into stock (or away, when not wanted). */
  private async deliver(pool: Pool, member: PoolMember): Promise<void> {
    const waiter = pool.waiters.shift();
    if (waiter) {
      await this.fullWeight(member);
      waiter.resolve({ ...member, fromStock: false });
      return;
    }
    // still counted as booting here: a room below 0 is the team's allowance shrunk meanwhile
    if (
      this.closed ||
      this.pools.get(pool.key) !== pool ||
      pool.ready.length >= pool.target ||
      this.room(pool) < 0
    ) {
      await this.destroy(member);
      return;
    }
    pool.ready.push(member);
  }

  /** A member handed out gets the weight of a sandbox in use. */
  private async fullWeight(member: PoolMember): Promise<void> {
    if (!this.yielding.delete(member.id)) return;
    // a member that cannot be reweighed still serves, at the stock weight; its logs say so
    await this.o.host.weigh(member, NORMAL_SHARES).catch((err: unknown) => {
      this.o.log.warn({ sandboxId: member.id, err }, "could not give a pool member its full CPU weight");
    });
  }

  private wakeFullWaiters(): void {
    for (const wake of this.fullWaiters) wake();
    this.fullWaiters.clear();
  }

  /** Pools that gave out nothing for `idleMs` give back one member above their minimum. */
  private async shrinkIdle(idleMs: number): Promise<void> {
    const now = Date.now();
    for (const pool of this.pools.values()) {
      if (pool.target <= pool.min || now - pool.lastTakeMs < idleMs) continue;
      pool.target--;
      pool.lastTakeMs = now;
      const extra = pool.ready.length > pool.target ? pool.ready.pop() : undefined;
      if (extra) await this.destroy(extra);
    }
  }

  private async drop(pool: Pool): Promise<void> {
    this.pools.delete(pool.key);
    clearTimeout(pool.settle);
    for (const waiter of pool.waiters.splice(0)) waiter.reject(new Error("the pool was dropped"));
    for (const member of pool.ready.splice(0)) await this.destroy(member);
  }

  /** Past its `maxPools`, a team's least recently used idle pools go: only that team's. */
  private async evictBeyondLimit(teamId: string | undefined): Promise<void> {
    const max = this.o.maxPools ?? 4;
    const own = [...this.pools.values()].filter((p) => p.teamId === teamId);
    const idle = own.filter((p) => p.waiters.length === 0).sort((a, b) => a.lastTakeMs - b.lastTakeMs);
    for (const pool of idle.slice(0, Math.max(0, own.length - max))) await this.drop(pool);
  }

  private async destroy(member: PoolMember): Promise<void> {
    this.yielding.delete(member.id);
    await this.o.host
      .destroy(member)
      .catch((err) => this.o.log.warn({ err }, "could not remove a warm pool member"));
    await forgetMember(this.o.recordDir, member.id);
  }
}
