/**
 * Memory snapshots under gVisor through the whole platform: a snapshot of a running sandbox
 * keeps its processes, sandboxes and forks started from it continue them (a background counter
 * goes on from where it was, not from zero), the source keeps running, and the snapshot says
 * which kind it is. Where a checkpoint is impossible (the sandbox's own process listens, or
 * the caller asks for files only) the snapshot keeps files and says so.
 */
import { Sandbox } from "e2b";
import { counterPassed, readCounter, startCounter } from "../helpers/counter.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

describe("memory snapshots on runsc", () => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  const made: Sandbox[] = [];

  async function api(method: string, p: string, body?: unknown) {
    const res = await fetch(`${t.apiUrl}${p}`, {
      method,
      headers: { "X-API-Key": t.apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  const count = (sb: Sandbox) => readCounter(sb);
  const advanced = (sb: Sandbox, from: number) => counterPassed(sb, from);

  async function counting(): Promise<Sandbox> {
    const sb = await Sandbox.create({ timeoutMs: 180_000 });
    made.push(sb);
    await sb.files.write("/home/user/before.txt", "written before the snapshot");
    await startCounter(sb);
    await advanced(sb, 5);
    return sb;
  }

  beforeAll(async () => {
    t = await startTestPlatform({ runtime: "runsc" });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    for (const sb of made) await sb.kill().catch(() => undefined);
    restoreEnv();
    await t?.stop();
  });

  it("keeps running processes: a sandbox from the snapshot continues the counter, the source goes on", async () => {
    const source = await counting();
    const snap = await api("POST", `/sandboxes/${source.sandboxId}/snapshots`, { name: "counting" });
    expect(snap.status).toBe(200);
    expect(snap.body).toMatchObject({ snapshotID: "default/counting:default", kind: "memory" });
    const atSnapshot = await count(source);

    // the source was restored right after and keeps counting
    expect(await advanced(source, atSnapshot)).toBeGreaterThan(atSnapshot);

    const copy = await Sandbox.create(snap.body.snapshotID, { timeoutMs: 120_000 });
    made.push(copy);
    const first = await count(copy);
    // it went on from the snapshot's value: the loop was not started again from zero
    expect(first).toBeGreaterThanOrEqual(atSnapshot - 1);
    expect(await advanced(copy, first)).toBeGreaterThan(first);
    expect(await copy.files.read("/home/user/before.txt")).toBe("written before the snapshot");
    // it is a sandbox of its own: its own identity, files apart from the source's
    expect((await copy.commands.run("echo $E2B_SANDBOX_ID")).stdout.trim()).toBe(copy.sandboxId);
    await copy.files.write("/home/user/only-in-copy.txt", "copy");
    expect(await source.files.exists("/home/user/only-in-copy.txt")).toBe(false);

    const listed = await api("GET", `/snapshots?sandboxID=${source.sandboxId}`);
    expect(listed.body).toEqual([
      { snapshotID: "default/counting:default", names: ["default/counting:default"], kind: "memory" },
    ]);
  });

  it("forks a running sandbox with its processes", async () => {
    const source = await counting();
    const forked = await api("POST", `/sandboxes/${source.sandboxId}/fork`, { count: 1, timeout: 120 });
    expect(forked.status).toBe(201);
    const id = forked.body[0].sandbox?.sandboxID as string;
    expect(id).toBeTruthy();
    const fork = await Sandbox.connect(id);
    made.push(fork);
    const first = await count(fork);
    expect(first).toBeGreaterThan(1);
    expect(await advanced(fork, first)).toBeGreaterThan(first);
    const atFork = await count(source);
    expect(await advanced(source, atFork)).toBeGreaterThan(atFork);
  });

  it("keeps files only when asked, or when the sandbox's own process listens", async () => {
    const source = await counting();
    const filesOnly = await api("POST", `/sandboxes/${source.sandboxId}/snapshots`, { memory: false });
    expect(filesOnly.body.kind).toBe("files");
    const fresh = await Sandbox.create(filesOnly.body.snapshotID, { timeoutMs: 60_000 });
    made.push(fresh);
    expect(await fresh.files.read("/home/user/before.txt")).toBe("written before the snapshot");
    // booted afresh: the counter file is there but nothing advances it
    const still = await count(fresh);
    await new Promise((r) => setTimeout(r, 500));
    expect(await count(fresh)).toBe(still);

    // a listening socket of its own makes gVisor refuse the checkpoint: files, and the server keeps serving
    const server = `node -e "require('http').createServer((q, s) => s.end('ok')).listen(8000)"`;
    await source.commands.run(server, { background: true, timeoutMs: 0 });
    const served = () =>
      fetch(`${t.proxyUrl}/`, {
        headers: { "E2b-Sandbox-Id": source.sandboxId, "E2b-Sandbox-Port": "8000" },
      }).then(
        (r) => r.status,
        () => 0,
      );
    for (let i = 0; i < 50 && (await served()) !== 200; i++) await new Promise((r) => setTimeout(r, 200));
    expect(await served()).toBe(200);
    const withListener = await api("POST", `/sandboxes/${source.sandboxId}/snapshots`, {});
    expect(withListener.body.kind).toBe("files");
    expect(await served()).toBe(200);
    const now = await count(source);
    expect(await advanced(source, now)).toBeGreaterThan(now);
  });
});
