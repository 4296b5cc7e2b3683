/**
 * A gVisor checkpoint through the whole platform: a sandbox that has served traffic through
 * the proxy (and the orchestrator's own /health and /init) is checkpointed, its memory leaves
 * the host, and on resume its processes go on where they were.
 */
import { readdirSync, readFileSync } from "node:fs";
import { Sandbox } from "e2b";
import { counterPassed, readCounter, startCounter } from "../helpers/counter.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

/** Resident memory (kB) of the host processes that make up a sandbox (gVisor's sandbox and gofer). */
function hostRssKb(sandboxId: string): number {
  let kb = 0;
  for (const pid of readdirSync("/proc").filter((d) => /^\d+$/.test(d))) {
    try {
      const cmdline = readFileSync(`/proc/${pid}/cmdline`, "utf8");
      if (!cmdline.includes(sandboxId) || !cmdline.includes("runsc")) continue;
      const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
      kb += Number(rss?.[1] ?? 0);
    } catch {
      // the process went away while we looked
    }
  }
  return kb;
}

describe("checkpoint on runsc", () => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  let sandbox: Sandbox | undefined;

  beforeAll(async () => {
    t = await startTestPlatform({ runtime: "runsc" });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    await sandbox?.kill().catch(() => undefined);
    restoreEnv();
    await t?.stop();
  });

  it("checkpoints a sandbox that served traffic and resumes it with its processes", async () => {
    sandbox = await Sandbox.create({ timeoutMs: 120_000 });
    const sb = sandbox;
    const read = () => readCounter(sb);
    const advanced = (from: number) => counterPassed(sb, from);

    await sb.files.write("/home/user/kept.txt", "kept across a checkpoint");
    await startCounter(sb);
    expect((await sb.commands.run("echo traffic")).stdout).toBe("traffic\n");
    expect(await sb.files.read("/home/user/kept.txt")).toBe("kept across a checkpoint");
    const before = await advanced(0);
    expect(before).toBeGreaterThan(0);

    const id = sb.sandboxId;
    const rssBefore = hostRssKb(id);
    expect(rssBefore).toBeGreaterThan(0);
    const pausedAt = performance.now();
    expect(await t.platform.orchestrator.pause(id, "checkpointed")).toBe("checkpointed");
    const checkpointMs = performance.now() - pausedAt;
    expect((await t.platform.store.sandboxes.get(id))?.pauseKind).toBe("checkpointed");
    expect(await sb.isRunning()).toBe(false);
    // the memory is on disk now: no host process of the sandbox is left holding it (the
    // stopped container's record is deleted in the background, by a short-lived runsc)
    for (let i = 0; i < 100 && hostRssKb(id) > 0; i++) await new Promise((r) => setTimeout(r, 100));
    expect(hostRssKb(id)).toBe(0);

    const resumedAt = performance.now();
    await sb.connect();
    const restoreMs = performance.now() - resumedAt;
    expect(await sb.isRunning()).toBe(true);
    // eslint-disable-next-line no-console
    console.log(
      `checkpoint (pause → checkpointed) ${Math.round(checkpointMs)} ms, ` +
        `host RSS ${Math.round(rssBefore / 1024)} MB → 0; ` +
        `restore (connect → envd answering) ${Math.round(restoreMs)} ms`,
    );

    // The counter goes on from where it stopped, not from 1: the process and its memory survived.
    const after = await read();
    expect(after).toBeGreaterThanOrEqual(before);
    expect(after).toBeLessThan(before + 100);
    expect(await advanced(after)).toBeGreaterThan(after);
    expect(await sb.files.read("/home/user/kept.txt")).toBe("kept across a checkpoint");
    // One counter, not two: a restore must not duplicate processes. The loop forks `sleep`, and
    // pgrep can catch a fork before its exec, so the count is taken a few times.
    const counts = [];
    for (let i = 0; i < 5; i++)
      counts.push((await sb.commands.run("pgrep -f 'while tru[e]' | wc -l")).stdout.trim());
    expect(counts).toContain("1");
    expect(counts.every((c) => c === "1" || c === "2")).toBe(true);
  }, 120_000);
});
