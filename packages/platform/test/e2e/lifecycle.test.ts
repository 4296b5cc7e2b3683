/**
 * The life of a sandbox after its create, through the public e2b client and the real proxy:
 * a paused sandbox is deepened after `deepPauseAfterMs` (stopped under runc; checkpointed under
 * gVisor, or stopped when its own process listens and gVisor refuses the checkpoint), a
 * sandbox is killed at its timeout or paused instead when it asked for that, and woken by
 * traffic when it asked for that too; the client's signed file URLs reach the sandbox whose
 * token signed them through the proxy's one URL, and an expired signature is refused.
 */
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { Sandbox, SandboxNotFoundError, type SandboxOpts } from "e2b";
import type { RuntimeName } from "../../src/runtime/container-runtime.js";
import { gvisorBefore2023 } from "../helpers/gvisor.js";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns something, for at most `ms`. */
async function until<T>(what: string, probe: () => Promise<T | undefined>, ms = 60_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting for ${what}`);
    await sleep(250);
  }
}

/** A platform on `runtime` with the e2b client pointed at it, for a describe block. */
function usePlatform(
  runtime: RuntimeName,
  config: NonNullable<Parameters<typeof startTestPlatform>[0]>["config"] = {},
) {
  let t: TestPlatform | undefined;
  let restoreEnv = () => {};
  const made: Sandbox[] = [];
  beforeAll(async () => {
    t = await startTestPlatform({ runtime, config });
    restoreEnv = pointE2bClient(t);
  });
  afterAll(async () => {
    for (const sb of made) await sb.kill().catch(() => undefined);
    restoreEnv();
    await t?.stop();
  });
  const platform = () => {
    if (!t) throw new Error("the platform is not up: use it inside a test");
    return t;
  };
  return {
    platform,
    /** Sandbox.create, killed after the block even when a test fails. */
    async create(opts: SandboxOpts = {}): Promise<Sandbox> {
      const sb = await Sandbox.create(opts);
      made.push(sb);
      return sb;
    },
    /** GET /sandboxes/{id} as the API answers it (the e2b client leaves `pauseKind` out). */
    async detail(id: string): Promise<{ status: number; body: Record<string, unknown> }> {
      const res = await fetch(`${platform().apiUrl}/sandboxes/${id}`, {
        headers: { "X-API-Key": platform().apiKey },
      });
      return { status: res.status, body: (await res.json()) as Record<string, unknown> };
    },
    /** A request through the proxy to a port of the sandbox, routed by headers. */
    async viaProxy(id: string, port: number, p = "/"): Promise<{ status: number; text: string }> {
      const res = await fetch(`${platform().proxyUrl}${p}`, {
        headers: { "E2b-Sandbox-Id": id, "E2b-Sandbox-Port": String(port) },
      });
      return { status: res.status, text: await res.text() };
    },
  };
}

type Platform = ReturnType<typeof usePlatform>;

/** Waits for the sandbox's pause depth (the API's `pauseKind`) to become `kind`. */
function pausedAs(p: Platform, id: string, kind: string, ms = 90_000): Promise<unknown> {
  return until(
    `${id} paused ${kind}`,
    async () => {
      const { body } = await p.detail(id);
      return body.state === "paused" && body.pauseKind === kind ? body : undefined;
    },
    ms,
  );
}

/** Background `sleep` processes in the sandbox (one is started by startSleeper). */
async function sleepers(sb: Sandbox): Promise<number> {
  return Number((await sb.commands.run("pgrep -x sleep | wc -l")).stdout.trim());
}

async function startSleeper(sb: Sandbox): Promise<void> {
  await sb.commands.run("sleep 1000", { background: true, timeoutMs: 0 });
  await until("the sleeper", async () => ((await sleepers(sb)) === 1 ? true : undefined), 10_000);
}

/** Starts `program` (a server on `port`) in the background; its first answer through the proxy. */
async function startServer(p: Platform, sb: Sandbox, port: number, program: string): Promise<string> {
  await sb.commands.run(`node -e "${program}"`, { background: true, timeoutMs: 0 });
  return until(
    `the sandbox's server on ${port}`,
    async () => {
      const res = await p.viaProxy(sb.sandboxId, port).catch(() => undefined);
      return res?.status === 200 ? res.text : undefined;
    },
    20_000,
  );
}

/** A server on `port` answering its pid and a value drawn when it started (its memory). */
function serve(p: Platform, sb: Sandbox, port: number): Promise<string> {
  const program = `const id = Math.random(); require('http').createServer((q, s) => s.end(JSON.stringify({ pid: process.pid, id }))).listen(${port})`;
  return startServer(p, sb, port, program);
}

/**
 * A keep-alive HTTP server that closes its end of a connection only a second after the peer
 * closed theirs (as a busy process would), reached once through the proxy: the proxy keeps
 * that connection in its pool.
 */
async function serveLingering(p: Platform, sb: Sandbox, port: number): Promise<void> {
  const program = `require('net').createServer({ allowHalfOpen: true }, (s) => { s.on('error', () => {}); s.on('data', () => s.write('HTTP/1.1 200 OK\\r\\nContent-Length: 2\\r\\n\\r\\nok')); s.on('end', () => setTimeout(() => s.end(), 1000)); }).listen(${port})`;
  expect(await startServer(p, sb, port, program)).toBe("ok");
}

describe("deep pause on runc", () => {
  const p = usePlatform("runc", { deepPauseAfterMs: 4_000 });

  it("stops a frozen sandbox after the delay: files kept, processes restarted on resume", async () => {
    const sb = await p.create({ timeoutMs: 120_000 });
    const id = sb.sandboxId;
    await sb.files.write("/home/user/kept.txt", "written before the pause");
    await startSleeper(sb);

    await sb.pause();
    // frozen first (memory kept), deepened only once the delay has passed
    expect((await p.detail(id)).body).toMatchObject({ state: "paused", pauseKind: "frozen" });
    await pausedAs(p, id, "stopped");
    expect((await p.platform().platform.store.sandboxes.get(id))?.pauseKind).toBe("stopped");
    expect((await Sandbox.getInfo(id)).state).toBe("paused");

    const again = await Sandbox.connect(id);
    expect((await again.getInfo()).state).toBe("running");
    expect((await p.detail(id)).body.pauseKind).toBeUndefined();
    expect(await again.files.read("/home/user/kept.txt")).toBe("written before the pause");
    // booted again from its files: the process it ran before the pause is gone
    expect(await sleepers(again)).toBe(0);
    expect((await again.commands.run("echo ok")).stdout).toBe("ok\n");
  });
});

describe("deep pause on runsc", () => {
  const p = usePlatform("runsc", { deepPauseAfterMs: 4_000 });

  it("checkpoints a frozen sandbox after the delay, or stops it when its own process listens", async () => {
    // gVisor before 2023 refuses to save a listening socket of the sandbox's own: the fallback
    // is a stop; later ones save it, and the server goes on after the restore
    const savesListeners = !gvisorBefore2023();
    const quiet = await p.create({ timeoutMs: 180_000 });
    const listening = await p.create({ timeoutMs: 180_000 });
    for (const sb of [quiet, listening])
      await sb.files.write("/home/user/kept.txt", `kept by ${sb.sandboxId}`);
    await startSleeper(quiet);
    const served = await serve(p, listening, 8000);
    expect(JSON.parse(served)).toMatchObject({ pid: expect.any(Number) });
    // the proxy drops its pooled connection at the pause: with a FIN, the sandbox's end would
    // stay open until this server closed it, a second after the thaw that precedes the
    // checkpoint, and gVisor would refuse the checkpoint; the proxy resets it instead
    await serveLingering(p, listening, 8001);

    await quiet.pause();
    await listening.pause();
    expect((await p.detail(quiet.sandboxId)).body).toMatchObject({ state: "paused", pauseKind: "frozen" });
    expect((await p.detail(listening.sandboxId)).body).toMatchObject({
      state: "paused",
      pauseKind: "frozen",
    });
    await pausedAs(p, quiet.sandboxId, "checkpointed");
    await pausedAs(p, listening.sandboxId, savesListeners ? "checkpointed" : "stopped");

    // checkpointed: memory on disk, the processes go on after the restore
    const q = await Sandbox.connect(quiet.sandboxId);
    expect(await q.files.read("/home/user/kept.txt")).toBe(`kept by ${quiet.sandboxId}`);
    expect(await sleepers(q)).toBe(1);

    // stopped: files kept, the server did not survive; checkpointed: it serves again
    const l = await Sandbox.connect(listening.sandboxId);
    expect(await l.files.read("/home/user/kept.txt")).toBe(`kept by ${listening.sandboxId}`);
    const after = await p.viaProxy(listening.sandboxId, 8000);
    expect(after.status).toBe(savesListeners ? 200 : 502);
    if (savesListeners) expect(after.text).toBe(served); // the same process, not a new one

    expect((await l.commands.run("echo ok")).stdout).toBe("ok\n");
  });
});

describe("timeouts on runc", () => {
  const p = usePlatform("runc");

  it("kills a sandbox when its timeout expires", async () => {
    const sb = await p.create({ timeoutMs: 3_000 });
    const id = sb.sandboxId;
    await until(
      "the sandbox to expire",
      () =>
        Sandbox.getInfo(id).then(
          () => undefined,
          (err: unknown) => {
            if (err instanceof SandboxNotFoundError) return true;
            throw err;
          },
        ),
      60_000,
    );
    const row = await p.platform().platform.store.sandboxes.get(id);
    expect(row?.state).toBe("killed");
    expect(Date.parse(row!.endAt) - Date.parse(row!.startedAt)).toBe(3_000);
    // the deadline acts at most a second early (orchestrator onDeadline)
    expect(Date.parse(row!.killedAt!)).toBeGreaterThanOrEqual(Date.parse(row!.endAt) - 1_000);

    expect(await sb.isRunning()).toBe(false);
    await expect(Sandbox.connect(id)).rejects.toThrow(SandboxNotFoundError);
    expect((await p.detail(id)).status).toBe(404);
    const listed = await Sandbox.list().nextItems();
    expect(listed.map((s) => s.sandboxId)).not.toContain(id);
    // nothing of it is left mounted on the host
    const mounts = readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .filter((l) => l.split(" ")[1]?.startsWith(path.join(TEST_DATA_DIR, "sandboxes", id)));
    expect(mounts).toEqual([]);
  });

  it("pauses a sandbox that asked for it at its timeout; without autoResume traffic does not wake it", async () => {
    const sb = await p.create({ timeoutMs: 3_000, lifecycle: { onTimeout: "pause" } });
    const id = sb.sandboxId;
    await pausedAs(p, id, "frozen", 60_000);
    const info = await Sandbox.getInfo(id);
    expect(info.state).toBe("paused");
    expect(info.lifecycle).toEqual({ onTimeout: "pause", autoResume: false });

    // through the proxy: not running, and it stays paused
    expect(await sb.isRunning()).toBe(false);
    const health = await p.viaProxy(id, 49983, "/health");
    expect(health.status).toBe(502);
    expect(JSON.parse(health.text)).toMatchObject({ code: 502, sandboxID: id });
    expect((await Sandbox.getInfo(id)).state).toBe("paused");

    const again = await Sandbox.connect(id);
    expect((await again.getInfo()).state).toBe("running");
    expect((await again.commands.run("echo ok")).stdout).toBe("ok\n");
  });

  it("pauses with only its files at the timeout when asked not to keep memory", async () => {
    // autoResume cannot go with it: the server refuses that as the client does
    const refused = await fetch(`${p.platform().apiUrl}/v2/sandboxes`, {
      method: "POST",
      headers: { "X-API-Key": p.platform().apiKey, "Content-Type": "application/json" },
      body: JSON.stringify({
        templateID: "base",
        autoPause: true,
        autoPauseMemory: false,
        autoResume: { enabled: true },
      }),
    });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({
      code: 400,
      message: expect.stringContaining("keepMemory: false"),
    });

    const sb = await p.create({
      timeoutMs: 30_000,
      lifecycle: { onTimeout: { action: "pause", keepMemory: false } },
    });
    const id = sb.sandboxId;
    await sb.files.write("/home/user/kept.txt", "files only");
    await startSleeper(sb);
    await sb.setTimeout(2_000);
    await pausedAs(p, id, "stopped", 60_000);

    const again = await Sandbox.connect(id);
    expect(await again.files.read("/home/user/kept.txt")).toBe("files only");
    // its memory was not kept: the process is gone
    expect(await sleepers(again)).toBe(0);
  });

  it("pauses at the timeout and is woken by traffic through the proxy with autoResume", async () => {
    const sb = await p.create({ timeoutMs: 60_000, lifecycle: { onTimeout: "pause", autoResume: true } });
    const id = sb.sandboxId;
    expect((await sb.getInfo()).lifecycle).toEqual({ onTimeout: "pause", autoResume: true });
    await sb.files.write("/home/user/kept.txt", "written before the timeout");
    const before = await serve(p, sb, 8080);

    await sb.setTimeout(3_000);
    // polled through the API only: traffic through the proxy would wake it
    await pausedAs(p, id, "frozen", 60_000);
    expect((await Sandbox.getInfo(id)).state).toBe("paused");

    // the request that wakes it is answered by the same server process, with its memory
    const woken = await p.viaProxy(id, 8080);
    expect(woken).toEqual({ status: 200, text: before });
    const info = await Sandbox.getInfo(id);
    expect(info.state).toBe("running");
    // resumed with a fresh timeout (at least a minute), not expired at once
    expect(info.endAt.getTime()).toBeGreaterThan(Date.now() + 30_000);
    expect(await sb.files.read("/home/user/kept.txt")).toBe("written before the timeout");
  });
});

describe("signed file URLs through the proxy on runc", () => {
  const p = usePlatform("runc");
  const file = "/home/user/signed.txt";

  /** Uploads `content` to `url` the way a browser form would (multipart, field `file`). */
  function upload(url: string, content: string): Promise<Response> {
    const form = new FormData();
    form.append("file", new Blob([content]), "signed.txt");
    return fetch(url, { method: "POST", body: form });
  }

  it("upload and download reach the sandbox whose token signed them", async () => {
    const one = await p.create({ timeoutMs: 120_000 });
    const two = await p.create({ timeoutMs: 120_000 });
    for (const sb of [one, two]) {
      const url = await sb.uploadUrl(file);
      // the proxy's one URL (E2B_SANDBOX_URL): nothing in it names the sandbox
      expect(url.startsWith(`${p.platform().proxyUrl}/files?`)).toBe(true);
      expect(url).not.toContain(sb.sandboxId);
      const res = await upload(url, `uploaded to ${sb.sandboxId}`);
      expect(res.status).toBe(200);
      expect(await res.json()).toEqual([expect.objectContaining({ path: file })]);
    }
    for (const sb of [one, two]) {
      expect(await sb.files.read(file)).toBe(`uploaded to ${sb.sandboxId}`);
      const res = await fetch(await sb.downloadUrl(file));
      expect(res.status).toBe(200);
      expect(await res.text()).toBe(`uploaded to ${sb.sandboxId}`);
    }

    // a URL signed to read does not write
    const misused = await upload(await one.downloadUrl(file), "overwritten");
    expect(misused.status).toBe(400);
    expect(await one.files.read(file)).toBe(`uploaded to ${one.sandboxId}`);
  });

  it("refuses an expired signature with 401, and takes one not yet expired", async () => {
    const sb = await p.create({ timeoutMs: 120_000 });
    await sb.files.write(file, "before");

    const fresh = await sb.downloadUrl(file, { useSignatureExpiration: 300 });
    expect(new URL(fresh).searchParams.get("signature_expiration")).toMatch(/^\d+$/);
    const ok = await fetch(fresh);
    expect(ok.status).toBe(200);
    expect(await ok.text()).toBe("before");

    const readUrl = await sb.downloadUrl(file, { useSignatureExpiration: 1 });
    const writeUrl = await sb.uploadUrl(file, { useSignatureExpiration: 1 });
    const expiration = Math.max(
      ...[readUrl, writeUrl].map((u) => Number(new URL(u).searchParams.get("signature_expiration"))),
    );
    // expired once the second it names has passed
    await until("the signature to expire", async () =>
      Math.floor(Date.now() / 1000) > expiration ? true : undefined,
    );
    const read = await fetch(readUrl);
    expect(read.status).toBe(401);
    expect(await read.json()).toEqual({ code: 401, message: "signature is already expired" });
    const write = await upload(writeUrl, "after");
    expect(write.status).toBe(401);
    expect(await write.json()).toEqual({ code: 401, message: "signature is already expired" });
    expect(await sb.files.read(file)).toBe("before");
  });
});
