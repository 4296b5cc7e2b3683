/**
 * Persistent volumes through the public e2b client (`Volume`, `volumeMounts`), pointed at the
 * platform as a user would (`E2B_VOLUME_API_URL` is the API's URL): the control plane and its
 * errors, the content API's 404/409/force rules, a 5 MB stream, a content API that never
 * follows a sandbox's symlinks out of the volume, then per runtime: two sandboxes sharing a
 * volume, its mount kept over a deep pause, a full volume (ENOSPC in the sandbox, 507 on the
 * content API), and deletion refused while mounted.
 */
import { createHash, randomBytes } from "node:crypto";
import {
  AuthenticationError,
  Sandbox,
  type SandboxOpts,
  Volume,
  VolumeError,
  VolumeNotFoundError,
  VolumePathNotFoundError,
} from "e2b";
import type { RuntimeName } from "../../src/runtime/container-runtime.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

jest.setTimeout(240_000);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** A platform on `runtime`, the client pointed at it; every sandbox and volume made is removed after the block. */
function usePlatform(runtime: RuntimeName, config: { deepPauseAfterMs?: number } = {}) {
  let t: TestPlatform | undefined;
  let restoreEnv = () => {};
  const sandboxes: Sandbox[] = [];
  const volumes: string[] = [];
  beforeAll(async () => {
    t = await startTestPlatform({ runtime, config });
    restoreEnv = pointE2bClient(t);
    process.env.E2B_VOLUME_API_URL = t.apiUrl;
  });
  afterAll(async () => {
    for (const sb of sandboxes) await sb.kill().catch(() => undefined);
    for (const id of volumes) await Volume.destroy(id).catch(() => undefined);
    restoreEnv();
    await t?.stop();
  });
  const platform = () => {
    if (!t) throw new Error("the platform is not up");
    return t;
  };
  return {
    platform,
    async volume(name: string, sizeMB?: number): Promise<Volume> {
      if (sizeMB === undefined) {
        const v = await Volume.create(name);
        volumes.push(v.volumeId);
        return v;
      }
      // the client has no size option: the platform's extension, by hand
      const res = await fetch(`${platform().apiUrl}/volumes`, {
        method: "POST",
        headers: { "X-API-Key": platform().apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ name, sizeMB }),
      });
      const body = (await res.json()) as { volumeID: string };
      expect(res.status).toBe(201);
      volumes.push(body.volumeID);
      return Volume.connect(body.volumeID);
    },
    async sandbox(opts: SandboxOpts): Promise<Sandbox> {
      const sb = await Sandbox.create(opts);
      sandboxes.push(sb);
      return sb;
    },
  };
}

const unique = (prefix: string) => `${prefix}-${randomBytes(4).toString("hex")}`;

describe("volumes: control plane and content API", () => {
  const p = usePlatform("runc");

  test("create, list, get, connect and destroy, with E2B's errors", async () => {
    const name = unique("vol");
    const vol = await p.volume(name);
    expect(vol.name).toBe(name);
    expect((await Volume.list()).map((v) => v.name)).toContain(name);
    const info = await Volume.getInfo(vol.volumeId);
    expect(info).toMatchObject({ volumeId: vol.volumeId, name });
    expect(info.domain).toBeUndefined();
    // one token for the volume's life: a long-lived Volume object keeps working
    expect(info.token).toBe((await Volume.getInfo(vol.volumeId)).token);

    await expect(Volume.create(name)).rejects.toThrow(/400: Volume with name '.*' already exists/);
    await expect(Volume.create("bad name!")).rejects.toThrow(/400: Invalid volume name/);
    await expect(Volume.getInfo("not-a-volume")).rejects.toBeInstanceOf(VolumeNotFoundError);
    expect(await Volume.destroy("not-a-volume")).toBe(false);

    const other = await p.volume(unique("gone"));
    await other.writeFile("/f", "x");
    expect(await Volume.destroy(other.volumeId)).toBe(true);
    expect(await Volume.destroy(other.volumeId)).toBe(false);
    // its token died with it
    await expect(other.readFile("/f")).rejects.toBeInstanceOf(AuthenticationError);
  });

  test("the content API's 404, 409 and force rules, listing depth, metadata and removal", async () => {
    const vol = await p.volume(unique("content"));
    const stat = await vol.writeFile("/a.txt", "hello");
    expect(stat).toMatchObject({
      name: "a.txt",
      path: "/a.txt",
      type: "file",
      size: 5,
      mode: 0o644,
      uid: 1000,
    });
    expect(stat.mtime).toBeInstanceOf(Date);
    await expect(vol.writeFile("/a.txt", "again")).rejects.toThrow(/^409: /);
    await expect(vol.writeFile("/no/such/b.txt", "x")).rejects.toBeInstanceOf(VolumePathNotFoundError);
    await vol.writeFile("/a.txt", "replaced", { force: true });
    expect(await vol.readFile("/a.txt")).toBe("replaced");
    await vol.writeFile("/deep/er/c.txt", "c", { force: true, mode: 0o600, uid: 1234, gid: 1234 });
    expect(await vol.getInfo("/deep/er/c.txt")).toMatchObject({ mode: 0o600, uid: 1234, gid: 1234 });
    await vol.writeFile("empty", "");
    expect(await vol.readFile("/empty")).toBe("");
    expect(await vol.readFile("/a.txt", { format: "bytes" })).toEqual(new TextEncoder().encode("replaced"));

    expect(await vol.makeDir("/d")).toMatchObject({ type: "directory", mode: 0o755 });
    await expect(vol.makeDir("/d")).rejects.toThrow(/^409: /);
    await expect(vol.makeDir("/x/y")).rejects.toBeInstanceOf(VolumePathNotFoundError);
    expect(await vol.makeDir("/x/y", { force: true })).toMatchObject({ path: "/x/y" });
    expect(await vol.makeDir("/x/y", { force: true })).toMatchObject({ path: "/x/y" });
    await expect(vol.makeDir("/a.txt", { force: true })).rejects.toThrow(/^409: /);

    const top = (await vol.list("/")).map((e) => e.path);
    expect(top).toEqual(["/a.txt", "/d", "/deep", "/empty", "/x"]);
    const deep = (await vol.list("/", { depth: 3 })).map((e) => e.path);
    expect(deep).toEqual(["/a.txt", "/d", "/deep", "/deep/er", "/deep/er/c.txt", "/empty", "/x", "/x/y"]);
    await expect(vol.list("/", { depth: 11 })).rejects.toThrow(/^400: /);
    await expect(vol.list("/nope")).rejects.toBeInstanceOf(VolumePathNotFoundError);
    // `..` stops at the volume's root
    expect((await vol.list("/../../..")).map((e) => e.path)).toEqual(top);

    expect(await vol.updateMetadata("/a.txt", { mode: 0o640 })).toMatchObject({ mode: 0o640, uid: 1000 });
    expect(await vol.updateMetadata("/a.txt", { uid: 0 })).toMatchObject({ uid: 0, gid: 1000 });
    expect(await vol.exists("/deep")).toBe(true);
    await vol.remove("/deep");
    expect(await vol.exists("/deep")).toBe(false);
    await expect(vol.remove("/deep")).rejects.toBeInstanceOf(VolumePathNotFoundError);
    await expect(vol.remove("/")).rejects.toThrow(/^400: /);
    await expect(vol.readFile("/d")).rejects.toThrow(/^400: /);
  });

  test("a 5 MB stream goes in and comes out whole", async () => {
    const vol = await p.volume(unique("stream"));
    const data = randomBytes(5 * 1024 * 1024);
    let sent = 0;
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= data.length) return controller.close();
        controller.enqueue(data.subarray(sent, sent + 64 * 1024));
        sent += 64 * 1024;
      },
    });
    expect(await vol.writeFile("/big.bin", stream)).toMatchObject({ size: data.length });
    const back = await vol.readFile("/big.bin", { format: "bytes" });
    const hash = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");
    expect(hash(back)).toBe(hash(data));
  });

  test("the content API never follows a symlink a sandbox planted", async () => {
    const vol = await p.volume(unique("links"));
    const sb = await p.sandbox({ volumeMounts: { "/mnt/v": vol } });
    await sb.commands.run(
      "ln -s /etc /mnt/v/etc-link && ln -s /etc/hostname /mnt/v/host-name && mkdir /mnt/v/d",
    );
    await expect(vol.readFile("/etc-link/hostname")).rejects.toThrow(/^400: .*symbolic link/);
    await expect(vol.readFile("/host-name")).rejects.toThrow(/^400: /);
    await expect(vol.writeFile("/etc-link/evil", "x", { force: true })).rejects.toThrow(/^400: /);
    expect(await vol.getInfo("/etc-link")).toMatchObject({ type: "symlink", target: "/etc" });
    // removing the link removes the link, not what it points at
    await vol.remove("/etc-link");
    expect((await sb.commands.run("test -d /etc && echo ok")).stdout.trim()).toBe("ok");
  });

  test("bad mounts are one 400 naming every problem", async () => {
    const vol = await p.volume(unique("mounts"));
    const before = (await Sandbox.list().nextItems()).length;
    const err = await Sandbox.create({
      volumeMounts: { "/mnt/a": "no-such-volume", relative: vol, "/mnt/b/../c": vol, "/proc/x": vol },
    }).catch((e: unknown) => e as Error);
    expect(err).toBeInstanceOf(Error);
    const message = (err as Error).message;
    expect(message).toMatch(/^400: invalid mounts:/);
    expect(message).toContain("volume mount #0: volume 'no-such-volume' not found");
    expect(message).toContain("volume mount #1: path must be absolute");
    expect(message).toContain("volume mount #2: path must be normal");
    expect(message).toContain("volume mount #3: path must not be under /proc");
    // nothing was started for it
    expect((await Sandbox.list().nextItems()).length).toBe(before);
  });
});

describe.each(["runc", "runsc"] as const)("volumes mounted into sandboxes under %s", (runtime) => {
  const p = usePlatform(runtime, { deepPauseAfterMs: 1_000 });

  test("two sandboxes share a volume with the SDK, and list and getInfo show the mount", async () => {
    const vol = await p.volume(unique("shared"));
    await vol.writeFile("/from-sdk.txt", "sdk");
    const [a, b] = await Promise.all([
      p.sandbox({ volumeMounts: { "/mnt/data": vol } }),
      p.sandbox({ volumeMounts: { "/data": vol.name } }),
    ]);
    expect((await a.commands.run("cat /mnt/data/from-sdk.txt")).stdout).toBe("sdk");
    // the sandbox's user owns the volume's root and writes to it
    await a.commands.run(
      "echo from-a > /mnt/data/a.txt && mkdir -p /mnt/data/dir && echo n > /mnt/data/dir/n",
    );
    expect((await b.commands.run("cat /data/a.txt /data/dir/n")).stdout).toBe("from-a\nn\n");
    await b.files.write("/data/b.txt", "from-b");
    expect(await a.files.read("/mnt/data/b.txt")).toBe("from-b");
    expect(await vol.readFile("/b.txt")).toBe("from-b");
    expect((await vol.getInfo("/a.txt")).uid).toBe(1000);

    expect((await a.getInfo()).volumeMounts).toEqual([{ name: vol.name, path: "/mnt/data" }]);
    const listed = await Sandbox.list().nextItems();
    expect(listed.find((s) => s.sandboxId === b.sandboxId)?.volumeMounts).toEqual([
      { name: vol.name, path: "/data" },
    ]);

    // deleting a mounted volume is refused (E2B deletes it from under its sandboxes)
    await expect(Volume.destroy(vol.volumeId)).rejects.toThrow(/^409: .*mounted by/);
    await a.kill();
    await expect(Volume.destroy(vol.volumeId)).rejects.toThrow(/^409: /);
    await b.kill();
    expect(await Volume.destroy(vol.volumeId)).toBe(true);
  });

  test("the mount is kept over a deep pause and resume", async () => {
    const vol = await p.volume(unique("paused"));
    const sb = await p.sandbox({ volumeMounts: { "/mnt/v": vol } });
    await sb.files.write("/mnt/v/before.txt", "before");
    await sb.pause();
    // written while the sandbox sleeps: seen after it wakes
    await vol.writeFile("/during.txt", "during");
    // past deepPauseAfterMs: checkpointed (gVisor) or stopped (runc)
    let pauseKind: string | undefined;
    for (let i = 0; i < 60 && (pauseKind === undefined || pauseKind === "frozen"); i++) {
      if (i > 0) await sleep(500);
      const res = await fetch(`${p.platform().apiUrl}/sandboxes/${sb.sandboxId}`, {
        headers: { "X-API-Key": p.platform().apiKey },
      });
      pauseKind = ((await res.json()) as { pauseKind?: string }).pauseKind;
    }
    // the resume below must come from the deep pause, not from the freezer
    expect(["checkpointed", "stopped"]).toContain(pauseKind);
    const again = await Sandbox.connect(sb.sandboxId);
    expect((await again.commands.run("cat /mnt/v/before.txt /mnt/v/during.txt")).stdout).toBe("beforeduring");
    await again.commands.run("echo after > /mnt/v/after.txt");
    expect(await vol.readFile("/after.txt")).toBe("after\n");
    expect((await again.getInfo()).volumeMounts).toEqual([{ name: vol.name, path: "/mnt/v" }]);
  });

  test("a full volume is its writers' ENOSPC and the content API's 507, and frees again", async () => {
    const vol = await p.volume(unique("full"), 16);
    const sb = await p.sandbox({ volumeMounts: { "/mnt/small": vol } });
    const fill = await sb.commands
      .run("dd if=/dev/zero of=/mnt/small/fill bs=1M count=64 2>&1", {
        onStdout: () => undefined,
      })
      .catch((e: { stdout?: string; stderr?: string }) => e);
    expect(`${fill.stdout ?? ""}${(fill as { stderr?: string }).stderr ?? ""}`).toMatch(
      /No space left on device/,
    );
    // the sandbox's own disk is not the volume's: it still writes there
    await sb.commands.run("echo fine > /home/user/fine.txt");
    const err = await vol.writeFile("/more.bin", new ArrayBuffer(8 * 1024 * 1024)).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(VolumeError);
    expect((err as Error).message).toMatch(/^507: volume '.*' is full \(16 MB\)/);
    // nothing half-written is left behind
    expect((await vol.list("/")).map((e) => e.name)).toEqual(["fill"]);
    // removed where it was written (under gVisor, a file the sandbox has seen stays allocated
    // until the sandbox lets go of it, even when the content API unlinks it)
    await sb.commands.run("rm /mnt/small/fill");
    expect(await vol.writeFile("/more.bin", new ArrayBuffer(4 * 1024 * 1024))).toMatchObject({
      size: 4 * 1024 * 1024,
    });
  });
});
