/**
 * The SDK end to end against a real platform (runc): every method goes through the platform
 * API and the sandbox proxy to a real envd, and each error path is checked by its class.
 */
import http from "node:http";
import { createPlatformClient } from "@x/platform-client";
import { startTestPlatform, type TestPlatform } from "../../platform/test/helpers/platform.js";
import {
  AuthenticationError,
  CommandExitError,
  ConflictError,
  type FilesystemEvent,
  FileType,
  InvalidArgumentError,
  NotEnoughSpaceError,
  NotFoundError,
  RateLimitError,
  Sandbox,
  SandboxError,
  Snapshot,
  TimeoutError,
  Volume,
} from "../src/index.js";

let t: TestPlatform;
let sandbox: Sandbox;
const saved = { ...process.env };

beforeAll(async () => {
  t = await startTestPlatform({ runtime: "runc" });
  // Options come from the environment, as a user would set them.
  process.env.X_API_URL = t.apiUrl;
  process.env.X_SANDBOX_URL = t.proxyUrl;
  process.env.X_API_KEY = t.apiKey;
  sandbox = await Sandbox.create({
    metadata: { suite: "sdk" },
    envs: { GREETING: "hi" },
    timeoutMs: 120_000,
  });
});

afterAll(async () => {
  process.env = saved;
  await sandbox?.kill().catch(() => undefined);
  await t?.stop();
});

function untilTrue(check: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  return new Promise((resolve, reject) => {
    const tick = () => {
      if (check()) resolve();
      else if (Date.now() > deadline) reject(new Error("condition not met in time"));
      else setTimeout(tick, 50);
    };
    tick();
  });
}

describe("sandbox lifecycle", () => {
  it("reports info, lists, sets the timeout, gives metrics and a host", async () => {
    const info = await sandbox.getInfo();
    expect(info.sandboxID).toBe(sandbox.sandboxId);
    expect(info.state).toBe("running");
    expect(info.metadata).toEqual({ suite: "sdk" });

    const listed = await Sandbox.list({ metadata: { suite: "sdk" } });
    expect(listed.map((s) => s.sandboxID)).toEqual([sandbox.sandboxId]);
    expect(await Sandbox.list({ metadata: { suite: "other" } })).toEqual([]);

    const before = Date.parse(info.endAt);
    await sandbox.setTimeout(600_000);
    expect(Date.parse((await sandbox.getInfo()).endAt)).toBeGreaterThan(before);

    const metrics = await sandbox.getMetrics();
    expect(Array.isArray(metrics)).toBe(true);
    for (const m of metrics) expect(m.memTotal).toBeGreaterThan(0);

    // The host routes through the proxy: envd's own health route answers under it.
    const host = sandbox.getHost(49983);
    expect(host).toBe(`49983-${sandbox.sandboxId}.sandbox.localhost`);
    const { port } = new URL(t.proxyUrl);
    const status = await new Promise<number | undefined>((resolve, reject) => {
      http
        .get({ host: "127.0.0.1", port, path: "/health", headers: { Host: host } }, (res) => {
          res.resume();
          resolve(res.statusCode);
        })
        .on("error", reject);
    });
    expect(status).toBe(204);
  });

  it("uses the environment's envs", async () => {
    expect((await sandbox.commands.run("echo $GREETING")).stdout).toBe("hi\n");
  });

  it("pauses, resumes, connects by id, snapshots and kills by id", async () => {
    const other = await Sandbox.create({ timeoutMs: 60_000 });
    try {
      await other.files.write("/home/user/kept.txt", "kept");
      expect(await other.pause()).toBe(true);
      expect((await other.getInfo()).state).toBe("paused");
      expect(await other.pause()).toBe(false);
      await other.resume();
      expect((await other.getInfo()).state).toBe("running");
      expect(await other.files.read("/home/user/kept.txt")).toBe("kept");

      const again = await Sandbox.connect(other.sandboxId);
      expect((await again.commands.run("cat /home/user/kept.txt")).stdout).toBe("kept");

      const snapshot = await other.createSnapshot({ name: `sdk-snap-${Date.now()}` });
      expect(snapshot.snapshotID).toBeTruthy();
      const fromSnapshot = await Sandbox.create({ template: snapshot.snapshotID, timeoutMs: 60_000 });
      try {
        expect(await fromSnapshot.files.read("/home/user/kept.txt")).toBe("kept");
      } finally {
        await fromSnapshot.kill();
        const api = createPlatformClient({ baseUrl: t.apiUrl, apiKey: t.apiKey });
        const deleted = await api.DELETE("/templates/{templateID}", {
          params: { path: { templateID: snapshot.snapshotID } },
        });
        expect(deleted.response.status).toBeLessThan(300);
      }
    } finally {
      expect(await Sandbox.kill(other.sandboxId)).toBe(true);
    }
    expect(await Sandbox.kill(other.sandboxId)).toBe(false);
    expect(await other.kill()).toBe(false);
    await expect(Sandbox.connect(other.sandboxId)).rejects.toBeInstanceOf(NotFoundError);
    // envd traffic to a killed sandbox: the proxy's 502 is a NotFoundError too.
    await expect(other.files.read("/home/user/kept.txt")).rejects.toBeInstanceOf(NotFoundError);
    await expect(other.commands.run("true")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("files", () => {
  it("writes one and many, reads text, bytes and streams", async () => {
    const one = await sandbox.files.write("/home/user/dir/a.txt", "alpha");
    expect(one.path).toBe("/home/user/dir/a.txt");
    const many = await sandbox.files.write([
      { path: "/home/user/dir/b.bin", data: new Uint8Array([0, 1, 2, 255]) },
      { path: "dir/c.txt", data: new Blob(["gamma"]) },
      { path: "/home/user/dir/empty.txt", data: "" },
    ]);
    expect(many.map((e) => e.path)).toEqual([
      "/home/user/dir/b.bin",
      "/home/user/dir/c.txt",
      "/home/user/dir/empty.txt",
    ]);

    expect(await sandbox.files.read("/home/user/dir/a.txt")).toBe("alpha");
    expect(await sandbox.files.read("/home/user/dir/c.txt")).toBe("gamma");
    expect(await sandbox.files.read("/home/user/dir/empty.txt")).toBe("");
    expect(Array.from(await sandbox.files.read("/home/user/dir/b.bin", { format: "bytes" }))).toEqual([
      0, 1, 2, 255,
    ]);
    const stream = await sandbox.files.read("/home/user/dir/a.txt", { format: "stream" });
    expect(await new Response(stream).text()).toBe("alpha");
    expect(await (await sandbox.files.read("/home/user/dir/a.txt", { format: "blob" })).text()).toBe("alpha");
    // The bytes are really on disk in the sandbox.
    expect((await sandbox.commands.run("od -An -tu1 /home/user/dir/b.bin")).stdout.trim()).toBe(
      "0   1   2 255",
    );
  });

  it("lists, stats, checks existence, makes dirs, renames and removes", async () => {
    await sandbox.files.write("/home/user/fs/x.txt", "12345");
    const entries = await sandbox.files.list("/home/user/fs");
    expect(entries.map((e) => e.name)).toEqual(["x.txt"]);

    const info = await sandbox.files.getInfo("/home/user/fs/x.txt");
    expect(info.type).toBe(FileType.FILE);
    expect(info.size).toBe(5n);
    expect(info.owner).toBe("user");

    expect(await sandbox.files.exists("/home/user/fs/x.txt")).toBe(true);
    expect(await sandbox.files.exists("/home/user/fs/nope")).toBe(false);

    expect(await sandbox.files.makeDir("/home/user/fs/sub/deeper")).toBe(true);
    expect(await sandbox.files.makeDir("/home/user/fs/sub/deeper")).toBe(false);
    expect((await sandbox.files.getInfo("/home/user/fs/sub/deeper")).type).toBe(FileType.DIRECTORY);

    const moved = await sandbox.files.rename("/home/user/fs/x.txt", "/home/user/fs/sub/y.txt");
    expect(moved.path).toBe("/home/user/fs/sub/y.txt");
    expect(await sandbox.files.exists("/home/user/fs/x.txt")).toBe(false);
    expect(await sandbox.files.read("/home/user/fs/sub/y.txt")).toBe("12345");

    await sandbox.files.remove("/home/user/fs/sub");
    expect(await sandbox.files.exists("/home/user/fs/sub")).toBe(false);
    expect((await sandbox.commands.run("ls -A /home/user/fs")).stdout).toBe("");
  });

  it("watches a directory until stopped", async () => {
    await sandbox.files.makeDir("/home/user/watched");
    const events: FilesystemEvent[] = [];
    let exited = false;
    const handle = await sandbox.files.watchDir("/home/user/watched", (e) => void events.push(e), {
      onExit: () => {
        exited = true;
      },
    });
    await sandbox.files.write("/home/user/watched/new.txt", "x");
    await untilTrue(() => events.some((e) => e.name === "new.txt"));
    await handle.stop();
    expect(exited).toBe(true);
    const seen = events.length;
    await sandbox.files.write("/home/user/watched/later.txt", "x");
    await new Promise((r) => setTimeout(r, 300));
    expect(events.length).toBe(seen);
  });

  it("throws typed errors", async () => {
    const missing = await sandbox.files.read("/home/user/missing.txt").catch((e) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toBeInstanceOf(SandboxError);
    expect(missing.message).toMatch(/missing\.txt/);
    await expect(sandbox.files.list("/home/user/no-such-dir")).rejects.toBeInstanceOf(NotFoundError);
    // like E2B's envd, removing a missing path succeeds: it is gone either way
    await expect(sandbox.files.remove("/home/user/no-such-file")).resolves.toBeUndefined();
    await sandbox.files.write("/home/user/plain.txt", "x");
    await expect(sandbox.files.list("/home/user/plain.txt")).rejects.toBeInstanceOf(InvalidArgumentError);
  });
});

describe("large files", () => {
  it("composes files and writes in chunks, removing the parts", async () => {
    await sandbox.files.write([
      { path: "/home/user/parts/1", data: "one-" },
      { path: "/home/user/parts/2", data: "two-" },
      { path: "/home/user/parts/3", data: "three" },
    ]);
    const composed = await sandbox.files.compose(
      ["/home/user/parts/1", "/home/user/parts/2", "/home/user/parts/3"],
      "/home/user/composed.txt",
    );
    expect(composed.path).toBe("/home/user/composed.txt");
    expect(await sandbox.files.read("/home/user/composed.txt")).toBe("one-two-three");
    expect(await sandbox.files.list("/home/user/parts")).toEqual([]);
    await expect(
      sandbox.files.compose(["/home/user/parts/none"], "/home/user/never.txt"),
    ).rejects.toBeInstanceOf(NotFoundError);

    // 3 MiB + 5 bytes of a known pattern in 1 MiB parts: four uploads, then one compose.
    const data = new Uint8Array(3 * 1024 * 1024 + 5).map((_, i) => (i * 7) % 251);
    const progress: number[] = [];
    const written = await sandbox.files.writeChunked("/home/user/big/data.bin", data, {
      chunkSizeBytes: 1024 * 1024,
      onProgress: (n) => progress.push(n),
    });
    expect(written.path).toBe("/home/user/big/data.bin");
    expect(progress).toEqual([1, 2, 3].map((n) => n * 1024 * 1024).concat(data.length));
    const back = await sandbox.files.read("/home/user/big/data.bin", { format: "bytes" });
    expect(back.length).toBe(data.length);
    expect(Buffer.from(back).equals(Buffer.from(data))).toBe(true);
    expect((await sandbox.files.list("/home/user/big")).map((e) => e.name)).toEqual(["data.bin"]);

    // A stream in uneven pieces comes out the same.
    const stream = new Blob([data]).stream();
    await sandbox.files.writeChunked("/home/user/big/streamed.bin", stream, { chunkSizeBytes: 1000 * 1000 });
    expect(
      (
        await sandbox.commands.run(
          "cmp /home/user/big/data.bin /home/user/big/streamed.bin && ls -A /home/user/big",
        )
      ).stdout,
    ).toBe("data.bin\nstreamed.bin\n");
  });

  it("reports a full disk as NotEnoughSpaceError and cleans up the parts", async () => {
    // /dev/shm is a 64 MiB tmpfs in every sandbox
    const error = await sandbox.files
      .write("/dev/shm/too-big.bin", new Uint8Array(70 * 1024 * 1024))
      .catch((e) => e);
    expect(error).toBeInstanceOf(NotEnoughSpaceError);
    expect(error.code).toBe("not_enough_space");
    expect(error.message).toMatch(/too-big\.bin/);
    await sandbox.files.remove("/dev/shm/too-big.bin").catch(() => undefined);

    const chunked = await sandbox.files
      .writeChunked("/dev/shm/chunked.bin", new Uint8Array(70 * 1024 * 1024), {
        chunkSizeBytes: 16 * 1024 * 1024,
      })
      .catch((e) => e);
    expect(chunked).toBeInstanceOf(NotEnoughSpaceError);
    expect((await sandbox.commands.run("ls -A /dev/shm")).stdout).toBe("");
  });
});

describe("snapshots and forks", () => {
  it("snapshots by name, lists page by page, forks and deletes", async () => {
    const source = await Sandbox.create({ timeoutMs: 120_000 });
    const created: Sandbox[] = [];
    try {
      await source.files.write("/home/user/state.txt", "v1");
      const first = await source.createSnapshot({ name: "sdk-snapshot" });
      expect(first.snapshotID).toMatch(/\/sdk-snapshot:default$/);
      expect(first.names).toEqual([first.snapshotID]);
      await source.files.write("/home/user/state.txt", "v2");
      const unnamed = await source.createSnapshot();
      expect(unnamed.snapshotID).toMatch(/^[^/]+:default$/);

      // one snapshot a page: two requests, the first answered with an X-Next-Token
      let pages = 0;
      const counting: typeof fetch = (input, init) => {
        if (String(input instanceof Request ? input.url : input).includes("/snapshots?")) pages++;
        return fetch(input, init);
      };
      const listed = await Snapshot.list({ sandboxId: source.sandboxId, pageSize: 1, fetch: counting });
      expect(listed.map((s) => s.snapshotID).sort()).toEqual([first.snapshotID, unnamed.snapshotID].sort());
      expect(pages).toBe(2);
      expect((await Snapshot.list({ name: "sdk-snapshot" })).map((s) => s.snapshotID)).toEqual([
        first.snapshotID,
      ]);
      expect(await Snapshot.list({ sandboxId: "no-such-sandbox" })).toEqual([]);

      const fromFirst = await Sandbox.create({ template: first.snapshotID, timeoutMs: 60_000 });
      created.push(fromFirst);
      expect(await fromFirst.files.read("/home/user/state.txt")).toBe("v1");
      // a snapshot in use cannot be deleted
      await expect(Snapshot.delete(first.snapshotID)).rejects.toBeInstanceOf(ConflictError);

      const forks = await source.fork({ count: 2, timeoutMs: 60_000 });
      expect(forks).toHaveLength(2);
      for (const fork of forks) {
        if (!(fork instanceof Sandbox)) throw fork;
        created.push(fork);
        expect(fork.sandboxId).not.toBe(source.sandboxId);
        expect(await fork.files.read("/home/user/state.txt")).toBe("v2");
      }
      expect((await source.getInfo()).state).toBe("running");
      await expect(Sandbox.fork("no-such-sandbox")).rejects.toBeInstanceOf(NotFoundError);
    } finally {
      for (const s of created) await s.kill();
      await source.kill();
      for (const snap of await Snapshot.list({ sandboxId: source.sandboxId }))
        expect(await Snapshot.delete(snap.snapshotID)).toBe(true);
    }
    expect(await Snapshot.list({ sandboxId: source.sandboxId })).toEqual([]);
    expect(await Snapshot.delete("sdk-snapshot")).toBe(false);
  });
});

describe("volumes", () => {
  it("creates a volume, reads and writes its files, mounts it and destroys it", async () => {
    const vol = await Volume.create("sdk-vol", { sizeMB: 32 });
    try {
      expect(vol.name).toBe("sdk-vol");
      expect((await Volume.list()).map((v) => v.name)).toContain("sdk-vol");
      expect(await vol.writeFile("/notes/a.txt", "alpha", { force: true })).toMatchObject({
        size: 5,
        mode: 0o644,
      });
      const chunks = [new TextEncoder().encode("str"), new TextEncoder().encode("eamed")];
      const stream = new ReadableStream<Uint8Array>({
        pull(c) {
          const next = chunks.shift();
          if (next) c.enqueue(next);
          else c.close();
        },
      });
      await vol.writeFile("/notes/b.txt", stream);
      expect(await vol.readFile("/notes/b.txt")).toBe("streamed");
      expect(await vol.readFile("/notes/a.txt", { format: "bytes" })).toEqual(
        new TextEncoder().encode("alpha"),
      );
      await expect(vol.writeFile("/notes/a.txt", "again")).rejects.toBeInstanceOf(ConflictError);
      await expect(vol.readFile("/nope")).rejects.toBeInstanceOf(NotFoundError);
      expect(await vol.makeDir("/empty")).toMatchObject({ type: "directory" });
      expect((await vol.list("/", { depth: 2 })).map((e) => e.path)).toEqual([
        "/empty",
        "/notes",
        "/notes/a.txt",
        "/notes/b.txt",
      ]);
      expect(await vol.updateMetadata("/notes/a.txt", { mode: 0o600 })).toMatchObject({ mode: 0o600 });
      await vol.remove("/empty");
      expect(await vol.exists("/empty")).toBe(false);

      const sb = await Sandbox.create({ volumeMounts: { "/mnt/notes": vol } });
      try {
        expect((await sb.commands.run("cat /mnt/notes/notes/b.txt")).stdout).toBe("streamed");
        expect((await Volume.getInfo(vol.volumeId)).mountedBy).toEqual([sb.sandboxId]);
        await expect(Volume.destroy(vol.volumeId)).rejects.toBeInstanceOf(ConflictError);
      } finally {
        await sb.kill();
      }
      const again = await Volume.connect(vol.volumeId);
      expect(await again.readFile("/notes/a.txt")).toBe("alpha");
    } finally {
      expect(await Volume.destroy(vol.volumeId)).toBe(true);
    }
    expect(await Volume.destroy(vol.volumeId)).toBe(false);
    await expect(Volume.getInfo(vol.volumeId)).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("commands", () => {
  it("runs with streaming callbacks and returns the result", async () => {
    const out: string[] = [];
    const err: string[] = [];
    const result = await sandbox.commands.run("echo one; echo two >&2; pwd; whoami", {
      onStdout: (d) => out.push(d),
      onStderr: (d) => err.push(d),
    });
    expect(result).toEqual({ exitCode: 0, stdout: "one\n/home/user\nuser\n", stderr: "two\n" });
    expect(out.join("")).toBe(result.stdout);
    expect(err.join("")).toBe("two\n");
    expect((await sandbox.commands.run("pwd; echo $A", { cwd: "/tmp", envs: { A: "b" } })).stdout).toBe(
      "/tmp\nb\n",
    );
  });

  it("throws CommandExitError with the output on a non-zero exit", async () => {
    const error = await sandbox.commands.run("echo partial; echo bad >&2; exit 3").catch((e) => e);
    expect(error).toBeInstanceOf(CommandExitError);
    expect(error).toBeInstanceOf(SandboxError);
    expect(error.exitCode).toBe(3);
    expect(error.stdout).toBe("partial\n");
    expect(error.stderr).toBe("bad\n");
    expect(error.message).toMatch(/code 3/);
  });

  it("runs in the background with stdin, lists, connects by pid and tag, and kills", async () => {
    const handle = await sandbox.commands.run("cat", { background: true, stdin: true, tag: "catter" });
    expect(handle.pid).toBeGreaterThan(0);
    const listed = await sandbox.commands.list();
    expect(listed.find((p) => p.pid === handle.pid)?.tag).toBe("catter");

    const seen: string[] = [];
    const byTag = await sandbox.commands.connect("catter", { onStdout: (d) => seen.push(d) });
    expect(byTag.pid).toBe(handle.pid);
    await handle.sendStdin("hello\n");
    await untilTrue(() => handle.stdout === "hello\n" && seen.join("") === "hello\n");
    await handle.closeStdin();
    expect(await handle.wait()).toEqual({ exitCode: 0, stdout: "hello\n", stderr: "" });
    expect((await byTag.wait()).exitCode).toBe(0);

    const sleeper = await sandbox.commands.run("sleep 600", { background: true });
    const byPid = await sandbox.commands.connect(sleeper.pid);
    expect(await sleeper.kill()).toBe(true);
    const killed = await sleeper.wait().catch((e) => e);
    expect(killed).toBeInstanceOf(CommandExitError);
    expect(killed.exitCode).not.toBe(0);
    await expect(byPid.wait()).rejects.toBeInstanceOf(CommandExitError);
    expect((await sandbox.commands.list()).map((p) => p.pid)).not.toContain(sleeper.pid);
    expect(await sandbox.commands.kill(sleeper.pid)).toBe(false);
    await expect(sandbox.commands.connect(999_999)).rejects.toBeInstanceOf(NotFoundError);
  });

  it("times out with a TimeoutError", async () => {
    const error = await sandbox.commands.run("sleep 30", { timeoutMs: 1000 }).catch((e) => e);
    expect(error).toBeInstanceOf(TimeoutError);
    expect(error.message).toMatch(/timeoutMs/);
  });
});

describe("pty", () => {
  it("creates a terminal, takes input, resizes and kills", async () => {
    const chunks: Uint8Array[] = [];
    const output = () => Buffer.concat(chunks).toString("utf8");
    const term = await sandbox.pty.create({ cols: 80, rows: 24, onData: (d) => chunks.push(d) });
    try {
      await sandbox.pty.sendInput(term.pid, "stty size; echo mark-$((6*7))\n");
      await untilTrue(() => output().includes("mark-42"));
      expect(output()).toMatch(/24 80/);
      await sandbox.pty.resize(term.pid, { cols: 100, rows: 30 });
      await sandbox.pty.sendInput(term.pid, "stty size\n");
      await untilTrue(() => /30 100/.test(output()));
    } finally {
      expect(await sandbox.pty.kill(term.pid)).toBe(true);
    }
    await expect(term.wait()).rejects.toBeInstanceOf(CommandExitError);
  });
});

describe("errors", () => {
  it("rejects a bad API key with AuthenticationError", async () => {
    const error = await Sandbox.list({ apiKey: "e2b_bad" }).catch((e) => e);
    expect(error).toBeInstanceOf(AuthenticationError);
    expect(error.code).toBe("authentication");
    expect(error.message).toMatch(/API key/);
    await expect(Sandbox.create({ apiKey: "e2b_bad" })).rejects.toBeInstanceOf(AuthenticationError);
  });

  it("reports unknown sandboxes and templates as NotFoundError", async () => {
    await expect(Sandbox.connect("no-such-sandbox")).rejects.toBeInstanceOf(NotFoundError);
    await expect(Sandbox.create({ template: "no-such-template" })).rejects.toBeInstanceOf(NotFoundError);
  });

  it("reports a bad argument as InvalidArgumentError", async () => {
    await expect(Sandbox.create({ timeoutMs: -1 })).rejects.toBeInstanceOf(InvalidArgumentError);
    await expect(sandbox.setTimeout(10 * 24 * 3600 * 1000)).rejects.toBeInstanceOf(InvalidArgumentError);
  });

  it("creates once per idempotencyKey, and refuses the key with other options", async () => {
    const idempotencyKey = `sdk-${Date.now()}`;
    const opts = { idempotencyKey, metadata: { suite: "sdk-idempotency" }, timeoutMs: 60_000 };
    const [one, two] = await Promise.all([Sandbox.create(opts), Sandbox.create(opts)]);
    try {
      expect(two.sandboxId).toBe(one.sandboxId);
      expect((await Sandbox.create(opts)).sandboxId).toBe(one.sandboxId);
      expect((await two.commands.run("echo once")).stdout).toBe("once\n");
      const other = await Sandbox.create({ ...opts, timeoutMs: 90_000 }).catch((e) => e);
      expect(other).toBeInstanceOf(InvalidArgumentError);
      expect(other.message).toMatch(/Idempotency-Key '.*' was used by your team within the last 24 hours/);
      const listed = await Sandbox.list({ metadata: { suite: "sdk-idempotency" } });
      expect(listed.map((s) => s.sandboxID)).toEqual([one.sandboxId]);
    } finally {
      await one.kill();
    }
  });
});

describe("rate limit", () => {
  let limited: TestPlatform;

  beforeAll(async () => {
    limited = await startTestPlatform({ runtime: "runc", config: { maxSandboxesPerTeam: 1 } });
  });

  afterAll(async () => {
    await limited?.stop();
  });

  it("reports the team's sandbox limit as RateLimitError, for create and for a fork that does not fit", async () => {
    const opts = { apiUrl: limited.apiUrl, sandboxUrl: limited.proxyUrl, apiKey: limited.apiKey };
    const only = await Sandbox.create({ ...opts, timeoutMs: 60_000 });
    try {
      const error = await Sandbox.create({ ...opts, timeoutMs: 60_000 }).catch((e) => e);
      expect(error).toBeInstanceOf(RateLimitError);
      expect(error.code).toBe("rate_limit");
      // a fork's forks are counted before anything is done: one that does not fit is refused whole
      await expect(only.fork({ count: 1 })).rejects.toBeInstanceOf(RateLimitError);
      expect(await Snapshot.list({ ...opts, sandboxId: only.sandboxId })).toEqual([]);
    } finally {
      await only.kill();
      for (const snap of await Snapshot.list({ ...opts, sandboxId: only.sandboxId }))
        await Snapshot.delete(snap.snapshotID, opts);
    }
  });
});
