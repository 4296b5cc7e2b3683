/**
 * The warm pool and the per-sandbox disk, through the public e2b client: a create hands a
 * ready sandbox its identity (token, env vars, metadata) instead of booting one, the pool
 * refills behind it, and a sandbox that fills its disk gets "not enough space" while the
 * host's disk is untouched. Nothing of either is left on the host afterwards.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { NotEnoughSpaceError, Sandbox } from "e2b";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";

const DISK_MB = 64;

function mountsOf(id: string): string[] {
  return readFileSync("/proc/self/mounts", "utf8")
    .split("\n")
    .filter((l) => l.split(" ")[1]?.startsWith(path.join(TEST_DATA_DIR, "sandboxes", id)));
}

describe.each(["runc", "runsc"] as const)("warm pool and sandbox disk on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({ runtime, config: { warmPoolSize: 1, diskSizeMB: DISK_MB } });
    restoreEnv = pointE2bClient(t);
    await t.platform.warmPool.whenFull();
  });

  afterAll(async () => {
    restoreEnv();
    const poolRecords = path.join(TEST_DATA_DIR, "pool", t.platform.config.networkPrefix);
    const members = t.platform.warmPool.stats();
    await t.stop();
    // pool members go with the platform: no records, no mounts
    expect(readdirSync(poolRecords)).toEqual([]);
    expect(members.length).toBeGreaterThan(0);
  });

  it("hands a ready sandbox its identity and refills", async () => {
    const [pool] = t.platform.warmPool.stats();
    expect(pool).toMatchObject({ runtime, ready: 1, target: 1 });

    const sandbox = await Sandbox.create({
      envs: { GREETING: "from the pool" },
      metadata: { pooled: "yes" },
    });
    try {
      // the pool is empty until its member is replaced
      expect(t.platform.warmPool.stats()[0]!.ready).toBe(0);
      const result = await sandbox.commands.run('echo "$GREETING"; hostname');
      expect(result.stdout).toBe(`from the pool\n${sandbox.sandboxId}\n`);
      const info = await sandbox.getInfo();
      expect(info.metadata).toEqual({ pooled: "yes" });

      // envd answers to the sandbox's own token only, not to the pool's any more
      const row = await t.platform.store.sandboxes.get(sandbox.sandboxId);
      const health = await fetch(`${t.proxyUrl}/files?path=/etc/hostname`, {
        headers: { "E2b-Sandbox-Id": sandbox.sandboxId, "E2b-Sandbox-Port": "49983", "X-Access-Token": "x" },
      });
      expect(health.status).toBe(401);
      expect(row?.envdAccessToken).toBeTruthy();

      await t.platform.warmPool.whenFull();
      expect(t.platform.warmPool.stats()[0]!.ready).toBe(1);
    } finally {
      await sandbox.kill();
    }
  });

  it("caps the sandbox's disk: a full disk is 'not enough space', the sandbox keeps working", async () => {
    const sandbox = await Sandbox.create();
    try {
      const df = await sandbox.commands.run("df -m --output=size / | tail -1");
      expect(Number(df.stdout.trim())).toBeLessThanOrEqual(DISK_MB);

      const big = new Uint8Array((DISK_MB + 8) * 1024 * 1024).fill(7);
      await expect(sandbox.files.write("/home/user/big.bin", big.buffer)).rejects.toBeInstanceOf(
        NotEnoughSpaceError,
      );
      const dd = await sandbox.commands
        .run("dd if=/dev/zero of=/home/user/fill bs=1M count=200 2>&1; sync", { user: "root" })
        .catch((e) => e.result ?? e);
      expect(dd.stdout + dd.stderr).toMatch(/No space left on device/);

      // after freeing space the sandbox writes and reads as before
      await sandbox.commands.run("rm -f /home/user/fill /home/user/big.bin", { user: "root" });
      await sandbox.files.write("/home/user/small.txt", "still fine");
      expect(await sandbox.files.read("/home/user/small.txt")).toBe("still fine");
    } finally {
      await sandbox.kill();
    }
    expect(mountsOf(sandbox.sandboxId)).toEqual([]);
  });

  it("keeps a stopped sandbox's files on its disk", async () => {
    const sandbox = await Sandbox.create();
    try {
      await sandbox.files.write("/home/user/kept.txt", "on the sandbox's own disk");
      const paused = await fetch(`${t.apiUrl}/sandboxes/${sandbox.sandboxId}/pause`, {
        method: "POST",
        headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ memory: false }),
      });
      expect(paused.status).toBe(204);
      // stopped: neither the root filesystem nor the disk stays mounted
      expect(mountsOf(sandbox.sandboxId)).toEqual([]);
      const resumed = await Sandbox.connect(sandbox.sandboxId);
      expect(await resumed.files.read("/home/user/kept.txt")).toBe("on the sandbox's own disk");
    } finally {
      await sandbox.kill();
    }
  });
});
