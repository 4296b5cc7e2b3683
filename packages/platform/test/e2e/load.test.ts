/**
 * Creates under load through the public e2b client: a burst larger than the warm pool and the
 * boot budget all succeed, each with a sandbox of its own; with no host memory to spare the
 * answer is a clear 503 at once, never a hang, and nothing is left behind.
 */
import { Sandbox, ServiceBusyError } from "e2b";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

describe("creates under load (runc)", () => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  afterEach(async () => {
    restoreEnv();
    await t?.stop();
  });

  it("a burst beyond the pool and the boot budget all succeed, each its own sandbox", async () => {
    t = await startTestPlatform({
      runtime: "runc",
      config: { warmPoolSize: 1, warmPoolMax: 3, bootConcurrency: 2 },
    });
    restoreEnv = pointE2bClient(t);
    await t.platform.warmPool.whenFull();
    const sandboxes = await Promise.all(Array.from({ length: 10 }, () => Sandbox.create()));
    try {
      const hostnames = await Promise.all(
        sandboxes.map(async (s) => (await s.commands.run("hostname")).stdout.trim()),
      );
      expect(new Set(hostnames).size).toBe(10);
      expect(hostnames.sort()).toEqual(sandboxes.map((s) => s.sandboxId).sort());
      const [pool] = t.platform.warmPool.stats();
      // one ready member was taken; the rest booted for their creates, and demand raised the target
      expect(pool).toMatchObject({ hits: 1, misses: 9, target: 3, waiting: 0 });
    } finally {
      await Promise.all(sandboxes.map((s) => s.kill()));
    }
  });

  it("answers 503 (the client's ServiceBusyError) at once when the host has no memory to spare", async () => {
    t = await startTestPlatform({ runtime: "runc", config: { memoryReserveMB: 10_000_000 } });
    restoreEnv = pointE2bClient(t);
    const err = await Sandbox.create().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceBusyError);
    expect(String((err as Error).message)).toMatch(/memory available/);
    const raw = await fetch(`${t.apiUrl}/v2/sandboxes`, {
      method: "POST",
      headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({ templateID: "base" }),
    });
    expect(raw.status).toBe(503);
    expect(raw.headers.get("retry-after")).toBe("10");
    expect(await raw.json()).toMatchObject({ code: 503 });
    expect(await t.platform.store.sandboxes.live()).toEqual([]);
  });
});
