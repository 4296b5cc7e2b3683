import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { runCommand } from "../agent/commands.js";
import { newSandboxId, newSecret } from "../lib/ids.js";
import type { Logger } from "../lib/log.js";
import type { RuntimeName } from "../model/sandbox.js";
import type { BootSpec, SandboxHost } from "../sandbox/sandbox-host.js";

/** A booted sandbox nobody owns yet: envd answers with the pool's own token. */
export interface PoolMember {
  id: string;
  runtime: RuntimeName;
  buildId: string;
  address: string;
  /** The token envd was started with; the claim replaces it through /init. */
  accessToken: string;
}

export interface WarmPoolOptions {
  /** Ready sandboxes kept per (build, runtime); 0 disables the pool. */
  size: number;
  host: SandboxHost;
  /** Where this platform records its members, so the next start can remove what it left. */
  recordDir: string;
  /** Most (build, runtime) pairs kept warm at once; the least recently used goes first. */
  maxPools?: number;
  log: Logger;
}

interface Pool {
  key: string;
  templateId: string;
  buildId: string;
  runtime: RuntimeName;
  /** The boot spec of a member, given its id and token. */
  specFor(id: string, accessToken: string): BootSpec;
  ready: PoolMember[];
  lastUsedMs: number;
  /** After a failed boot, no new attempt before this time. */
  retryAtMs: number;
}

/** A failed boot waits this long before the pool tries again (no hot loop on a broken build). */
const RETRY_AFTER_MS = 10_000;

const keyOf = (buildId: string, runtime: RuntimeName) => `${buildId}/${runtime}`;

/**
 * Ready sandboxes per template build and runtime, so a create only has to hand one its
 * identity (envd token, environment variables, metadata) instead of booting. Members are
 * booted one at a time in the background, never in the way of a create that found none.
 * Pools appear when a build is first used (and for `base` at start) and the least recently
 * used one is dropped when there are more than `maxPools`.
 */
export class WarmPool {
  private readonly pools = new Map<string, Pool>();
  private pumping?: Promise<void>;
  private closed = false;
  private readonly waiters = new Set<() => void>();

  constructor(private readonly o: WarmPoolOptions) {}

  get enabled(): boolean {
    return this.o.size > 0 && !this.closed;
  }

  /** Keeps `size` members of this build ready from now on (a no-op when already kept). */
  want(p: Pick<Pool, "templateId" | "buildId" | "runtime" | "specFor">): void {
    if (!this.enabled) return;
    const key = keyOf(p.buildId, p.runtime);
    const existing = this.pools.get(key);
    if (existing) {
      existing.lastUsedMs = Date.now();
      return;
    }
    this.pools.set(key, { ...p, key, ready: [], lastUsedMs: Date.now(), retryAtMs: 0 });
    void this.evictBeyondLimit();
    this.pump();
  }

  /** Takes a ready member of this build, if there is one; the pool refills behind it. */
  claim(buildId: string, runtime: RuntimeName): PoolMember | undefined {
    const pool = this.pools.get(keyOf(buildId, runtime));
    if (!pool) return undefined;
    pool.lastUsedMs = Date.now();
    const member = pool.ready.shift();
    this.pump();
    return member;
  }

  /** The claimed member is on record as a sandbox now: the pool no longer answers for it. */
  async handedOver(member: PoolMember): Promise<void> {
    await this.forget(member.id);
  }

  /** Resolves once every pool holds `size` members (or rejects after `timeoutMs`). */
  async whenFull(timeoutMs = 120_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!this.isFull()) {
      if (Date.now() > deadline) throw new Error(`the warm pool did not fill within ${timeoutMs} ms`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, 1000);
        this.waiters.add(() => {
          clearTimeout(timer);
          resolve();
        });
      });
    }
  }

  /** Per pool: how many members are ready, of how many wanted. */
  stats(): { templateId: string; buildId: string; runtime: RuntimeName; ready: number; size: number }[] {
    return [...this.pools.values()].map((p) => ({
      templateId: p.templateId,
      buildId: p.buildId,
      runtime: p.runtime,
      ready: p.ready.length,
      size: this.o.size,
    }));
  }

  /** Drops the pools of a template (before its layers are removed). */
  async discardTemplate(templateId: string): Promise<void> {
    for (const pool of [...this.pools.values()]) {
      if (pool.templateId === templateId) await this.drop(pool);
    }
  }

  /** Stops refilling and removes every member. */
  async close(): Promise<void> {
    this.closed = true;
    await this.pumping;
    for (const pool of [...this.pools.values()]) await this.drop(pool);
  }

  /** Removes members a previous process of this platform left behind (after a crash). */
  async discardLeftovers(): Promise<void> {
    const names = await readdir(this.o.recordDir).catch(() => [] as string[]);
    for (const name of names.filter((n) => n.endsWith(".json"))) {
      const file = path.join(this.o.recordDir, name);
      try {
        const { id, runtime } = JSON.parse(await readFile(file, "utf8")) as PoolMember;
        await this.o.host.destroy({ id, runtime });
        this.o.log.info({ sandboxId: id }, "removed a warm pool member left by a previous run");
      } catch (err) {
        this.o.log.warn({ file, err }, "could not remove a leftover warm pool member");
      }
      await rm(file, { force: true });
    }
  }

  private isFull(): boolean {
    return [...this.pools.values()].every((p) => p.ready.length >= this.o.size);
  }

  private async drop(pool: Pool): Promise<void> {
    this.pools.delete(pool.key);
    for (const member of pool.ready.splice(0)) await this.destroy(member);
  }

  private async evictBeyondLimit(): Promise<void> {
    const max = this.o.maxPools ?? 4;
    const byAge = [...this.pools.values()].sort((a, b) => a.lastUsedMs - b.lastUsedMs);
    for (const pool of byAge.slice(0, Math.max(0, byAge.length - max))) await this.drop(pool);
  }

  /** Boots members one at a time, most recently used pool first, until every pool is full. */
  private pump(): void {
    if (this.pumping || !this.enabled) return;
    this.pumping = (async () => {
      for (;;) {
        const now = Date.now();
        const next = [...this.pools.values()]
          .filter((p) => p.ready.length < this.o.size && p.retryAtMs <= now)
          .sort((a, b) => b.lastUsedMs - a.lastUsedMs)[0];
        if (!next || this.closed) break;
        await this.boot(next);
      }
    })().finally(() => {
      this.pumping = undefined;
      for (const wake of this.waiters) wake();
      this.waiters.clear();
      // a pool that failed gets its retry later
      const retryAt = Math.min(...[...this.pools.values()].map((p) => p.retryAtMs));
      if (!this.closed && Number.isFinite(retryAt) && retryAt > Date.now() && !this.isFull()) {
        setTimeout(() => this.pump(), retryAt - Date.now()).unref();
      }
    });
  }

  private async boot(pool: Pool): Promise<void> {
    const member: PoolMember = {
      id: newSandboxId(),
      runtime: pool.runtime,
      buildId: pool.buildId,
      address: "",
      accessToken: newSecret(),
    };
    const t0 = performance.now();
    try {
      await this.remember(member);
      const spec = pool.specFor(member.id, member.accessToken);
      member.address = await this.o.host.boot(spec);
      // the first command in a fresh sandbox pays for envd's cold code paths and the login
      // shell's first reads; the member pays here so the user's first command does not
      const target = { address: member.address, accessToken: member.accessToken };
      await runCommand(target, { cmd: "exec /bin/bash -l -c true", user: spec.defaultUser });
    } catch (err) {
      pool.retryAtMs = Date.now() + RETRY_AFTER_MS;
      this.o.log.warn({ buildId: pool.buildId, err }, "warm pool member failed to boot");
      await this.destroy(member);
      return;
    }
    if (this.pools.get(pool.key) !== pool || this.closed) {
      await this.destroy(member); // dropped while booting
      return;
    }
    pool.ready.push(member);
    for (const wake of this.waiters) wake();
    this.waiters.clear();
    this.o.log.info(
      {
        sandboxId: member.id,
        buildId: pool.buildId,
        runtime: pool.runtime,
        bootMs: Math.round(performance.now() - t0),
        ready: pool.ready.length,
      },
      "warm pool member ready",
    );
  }

  private async destroy(member: PoolMember): Promise<void> {
    await this.o.host
      .destroy(member)
      .catch((err) => this.o.log.warn({ err }, "could not remove a warm pool member"));
    await this.forget(member.id);
  }

  private async remember(member: PoolMember): Promise<void> {
    await mkdir(this.o.recordDir, { recursive: true });
    await writeFile(
      path.join(this.o.recordDir, `${member.id}.json`),
      JSON.stringify({ id: member.id, runtime: member.runtime }),
    );
  }

  private async forget(id: string): Promise<void> {
    await rm(path.join(this.o.recordDir, `${id}.json`), { force: true });
  }
}
