/**
 * Probes of the security review (2026-12-07), M7 and its part in M3: a runc sandbox's root is
 * root only in a user namespace of the sandbox's own (its host ids a range no host account
 * has), its files stay unshifted on disk (root's are uid 0, portable to gVisor), it holds
 * neither CAP_MKNOD nor CAP_NET_RAW, an allow-list seccomp profile refuses io_uring & co., and
 * an operator can keep tenants off runc. Through the public e2b client and the raw API, as a
 * tenant would; each failed on 90dd82b (io_uring answered "Bad address", mknod worked, the
 * uid map was the host's, the sandbox's init was host uid 0, a create could ask for runc).
 */
import { execFileSync } from "node:child_process";
import { readFileSync, statSync } from "node:fs";
import path from "node:path";
import { Sandbox } from "e2b";
import { createRuntime } from "../../src/runtime/create-runtime.js";
import { RUNC_VIEWS_DIR, USERNS_FIRST_HOST_ID, USERNS_SIZE } from "../../src/runtime/runc-userns.js";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";

interface Run {
  stdout: string;
  stderr: string;
  exitCode: number;
}

async function run(sandbox: Sandbox, cmd: string, user: "root" | "user" = "user"): Promise<Run> {
  const r = await sandbox.commands
    .run(cmd, { user, timeoutMs: 60_000 })
    .catch((e: { result?: unknown }) => e.result ?? e);
  return r as Run;
}

const py = (code: string) => `python3 - <<'PY'\n${code}\nPY`;

/** The container's init as the host sees it (runc's own record of it, /proc/<pid>/status). */
async function initOf(sandboxId: string): Promise<{ pid: number; uid: number[]; gid: number[] }> {
  const runtime = await createRuntime("runc", { stateDir: path.join(TEST_DATA_DIR, "runtime", "runc") });
  const pid = (await runtime.state({ id: sandboxId, netnsPath: "" }))?.pid;
  if (!pid) throw new Error(`runc knows no running container ${sandboxId}`);
  const status = readFileSync(`/proc/${pid}/status`, "utf8");
  const ids = (key: string) =>
    (status.match(new RegExp(`^${key}:\\s+(.*)$`, "m"))?.[1] ?? "").split(/\s+/).map(Number);
  return { pid, uid: ids("Uid"), gid: ids("Gid") };
}

/** The host range of the sandbox's namespace, as the sandbox itself reads it. */
async function hostRange(sandbox: Sandbox): Promise<number> {
  const map = (await run(sandbox, "cat /proc/self/uid_map")).stdout.trim();
  const m = map.match(/^0\s+(\d+)\s+(\d+)$/);
  if (!m) throw new Error(`not a user namespace's map: ${map}`);
  expect(Number(m[2])).toBe(USERNS_SIZE);
  return Number(m[1]);
}

describe("runc sandboxes: root inside is not root on the host", () => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  const sandboxes: Sandbox[] = [];
  const create = async () => {
    const s = await Sandbox.create({ timeoutMs: 300_000 });
    sandboxes.push(s);
    return s;
  };

  beforeAll(async () => {
    t = await startTestPlatform({ runtime: "runc" });
    restoreEnv = pointE2bClient(t);
  });

  afterEach(async () => {
    await Promise.all(sandboxes.splice(0).map((s) => s.kill().catch(() => undefined)));
  });

  afterAll(async () => {
    restoreEnv();
    await t?.stop();
  });

  it("refuses io_uring, device nodes, raw sockets and new namespaces", async () => {
    const s = await create();
    const uring = await run(
      s,
      py(
        "import ctypes,os; l=ctypes.CDLL(None,use_errno=True); l.syscall(425,8,None); print(os.strerror(ctypes.get_errno()))",
      ),
    );
    expect(uring.stdout.trim()).toMatch(/^(Operation not permitted|Function not implemented)$/);
    const mknod = await run(s, "mknod /tmp/d b 8 0", "root");
    expect(mknod.exitCode).not.toBe(0);
    expect(mknod.stderr).toMatch(/Operation not permitted/);
    const raw = await run(
      s,
      py(
        "import socket\ntry:\n socket.socket(socket.AF_INET, socket.SOCK_RAW, socket.IPPROTO_ICMP); print('raw')\nexcept OSError as e: print(e.strerror)",
      ),
      "root",
    );
    expect(raw.stdout.trim()).toBe("Operation not permitted");
    // namespaces (a user namespace would bring a fresh set of capabilities), bpf, keyrings
    const unshare = await run(s, "unshare --user --map-root-user true", "root");
    expect(unshare).toMatchObject({ exitCode: 1, stderr: expect.stringMatching(/Operation not permitted/) });
    for (const nr of [321 /* bpf */, 250 /* keyctl */, 298 /* perf_event_open */, 323 /* userfaultfd */]) {
      const r = await run(
        s,
        py(
          `import ctypes,os; l=ctypes.CDLL(None,use_errno=True); l.syscall(${nr},0,0,0,0,0); print(os.strerror(ctypes.get_errno()))`,
        ),
        "root",
      );
      expect({ nr, out: r.stdout.trim() }).toEqual({ nr, out: "Operation not permitted" });
    }
  });

  it("maps the sandbox's ids to a host range of its own, its files staying unshifted on disk", async () => {
    const [a, b] = [await create(), await create()];
    const [rangeA, rangeB] = [await hostRange(a), await hostRange(b)];
    for (const range of [rangeA, rangeB]) {
      expect(range).toBeGreaterThanOrEqual(USERNS_FIRST_HOST_ID);
      expect((range - USERNS_FIRST_HOST_ID) % USERNS_SIZE).toBe(0);
    }
    expect(rangeA).not.toBe(rangeB);
    // the sandbox's init, root inside, is the range's first id on the host
    const init = await initOf(a.sandboxId);
    expect(init).toEqual({ pid: init.pid, uid: Array(4).fill(rangeA), gid: Array(4).fill(rangeA) });
    const ps = execFileSync("ps", ["-o", "uid=", "-p", String(init.pid)], { encoding: "utf8" });
    expect(Number(ps.trim())).toBe(rangeA);

    expect(await run(a, "id -u && touch /root/made-by-root", "root")).toMatchObject({
      exitCode: 0,
      stdout: "0\n",
    });
    expect(await run(a, "touch /home/user/made-by-user")).toMatchObject({ exitCode: 0 });
    const upper = path.join(TEST_DATA_DIR, "sandboxes", a.sandboxId, "disk", "upper");
    expect(statSync(path.join(upper, "root", "made-by-root"))).toMatchObject({ uid: 0, gid: 0 });
    expect(statSync(path.join(upper, "home", "user", "made-by-user"))).toMatchObject({
      uid: 1000,
      gid: 1000,
    });
    // and the template's files are root's inside, as they are on disk
    expect((await run(a, "stat -c '%u %g %A' /usr/bin/sudo /etc")).stdout).toBe(
      "0 0 -rwsr-xr-x\n0 0 drwxr-xr-x\n",
    );
  });

  it("keeps sudo, ping, low ports, /etc/hosts, its own /sys and boot id working", async () => {
    const s = await create();
    expect(await run(s, "sudo -n id -u")).toMatchObject({ exitCode: 0, stdout: "0\n" });
    // ICMP datagram sockets stand in for raw ones (ping_group_range of the sandbox's netns)
    const ping = await run(
      s,
      py(
        "import socket,struct\ns=socket.socket(socket.AF_INET,socket.SOCK_DGRAM,socket.IPPROTO_ICMP); s.settimeout(3)\ns.sendto(struct.pack('!BBHHH',8,0,0,0,1)+b'x',('127.0.0.1',0))\nprint('reply' if s.recvfrom(64)[0][0]==0 else 'other')",
      ),
    );
    expect(ping).toMatchObject({ exitCode: 0, stdout: "reply\n" });
    const low = await run(
      s,
      py("import socket; s=socket.socket(); s.bind(('0.0.0.0', 80)); s.listen(); print('bound')"),
      "root",
    );
    expect(low).toMatchObject({ exitCode: 0, stdout: "bound\n" });
    expect(
      await run(s, "echo '10.9.9.9 m7-probe' | sudo tee -a /etc/hosts >/dev/null && getent hosts m7-probe"),
    ).toMatchObject({
      exitCode: 0,
      stdout: expect.stringMatching(/^10\.9\.9\.9\s+m7-probe/),
    });
    expect((await run(s, "ls /sys/class/net")).stdout.split(/\s+/).filter(Boolean).sort()).toEqual([
      "eth0",
      "lo",
    ]);
    const bootId = (await run(s, "cat /proc/sys/kernel/random/boot_id")).stdout.trim();
    expect(bootId).toMatch(/^[0-9a-f-]{36}$/);
    expect(bootId).not.toBe(readFileSync("/proc/sys/kernel/random/boot_id", "utf8").trim());
  });

  it("lets no host account run what the sandbox's root made set-uid (M3)", async () => {
    const s = await create();
    expect(await run(s, "cp /bin/bash /tmp/r && chmod 4755 /tmp/r", "root")).toMatchObject({ exitCode: 0 });
    // inside, set-uid works as ever: the user runs it as the sandbox's root
    expect(await run(s, "/tmp/r -p -c 'id -u'")).toMatchObject({ exitCode: 0, stdout: "0\n" });
    const sandboxDir = path.join(TEST_DATA_DIR, "sandboxes", s.sandboxId);
    const view = readFileSync(path.join(sandboxDir, "runc-view"), "utf8");
    expect(path.dirname(view)).toBe(RUNC_VIEWS_DIR);
    for (const copy of [
      path.join(view, "rootfs", "tmp", "r"),
      path.join(sandboxDir, "disk", "upper", "tmp", "r"),
    ]) {
      let out: string;
      try {
        out = execFileSync("runuser", ["-u", "nobody", "--", copy, "-p", "-c", "id -u"], {
          encoding: "utf8",
          stdio: "pipe",
        });
      } catch (err) {
        out = String((err as { stderr?: string }).stderr);
      }
      expect({ copy, out }).toEqual({ copy, out: expect.stringMatching(/Permission denied/) });
    }
  });

  it("gives its range back when the sandbox goes", async () => {
    const s = await create();
    const sandboxDir = path.join(TEST_DATA_DIR, "sandboxes", s.sandboxId);
    const view = readFileSync(path.join(sandboxDir, "runc-view"), "utf8");
    expect(statSync(view).uid).toBe(await hostRange(s));
    await s.kill();
    expect(() => statSync(view)).toThrow(/ENOENT/);
    const mounted = readFileSync("/proc/self/mounts", "utf8")
      .split("\n")
      .filter((l) => l.split(" ")[1]?.startsWith(`${view}/`));
    expect(mounted).toEqual([]);
  });

  it("keeps root's files uid 0 when a snapshot of the sandbox boots under gVisor", async () => {
    const s = await create();
    await run(
      s,
      "echo portable > /root/portable && touch /home/user/mine && chown user:user /home/user/mine",
      "root",
    );
    const headers = { "X-API-Key": t.apiKey, "Content-Type": "application/json" };
    const snap = await fetch(`${t.apiUrl}/sandboxes/${s.sandboxId}/snapshots`, {
      method: "POST",
      headers,
      body: "{}",
    });
    expect(snap.status).toBe(200);
    const { snapshotID } = (await snap.json()) as { snapshotID: string };
    const made = await fetch(`${t.apiUrl}/v2/sandboxes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ templateID: snapshotID, runtime: "runsc", timeout: 120 }),
    });
    expect(made.status).toBe(201);
    const gvisor = await Sandbox.connect(((await made.json()) as { sandboxID: string }).sandboxID);
    sandboxes.push(gvisor);
    const owners = await run(
      gvisor,
      py(
        "import os\nfor p in ['/root/portable','/home/user/mine']: st=os.stat(p); print(p, st.st_uid, st.st_gid)",
      ),
      "root",
    );
    expect(owners.stdout).toBe("/root/portable 0 0\n/home/user/mine 1000 1000\n");
    expect((await run(gvisor, "cat /root/portable", "root")).stdout).toBe("portable\n");
  });
});

describe("an operator keeps tenants off runc (--tenant-runtimes)", () => {
  let t: TestPlatform;

  beforeAll(async () => {
    t = await startTestPlatform({ runtime: "runsc", config: { tenantRuntimes: ["runsc"] } });
  });

  afterAll(async () => {
    await t?.stop();
  });

  it("refuses a create asking for runc with 403 and says why; one asking for none gets gVisor", async () => {
    const headers = { "X-API-Key": t.apiKey, "Content-Type": "application/json" };
    const refused = await fetch(`${t.apiUrl}/v2/sandboxes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ templateID: "base", runtime: "runc" }),
    });
    expect(refused.status).toBe(403);
    expect(await refused.json()).toEqual({
      code: 403,
      message:
        "runtime runc is not offered to tenants here: the operator allows runsc (x serve --tenant-runtimes)",
    });
    const made = await fetch(`${t.apiUrl}/v2/sandboxes`, {
      method: "POST",
      headers,
      body: JSON.stringify({ templateID: "base", timeout: 60 }),
    });
    expect(made.status).toBe(201);
    const body = (await made.json()) as { sandboxID: string; runtime?: string };
    try {
      const detail = await fetch(`${t.apiUrl}/sandboxes/${body.sandboxID}`, { headers });
      expect(((await detail.json()) as { runtime: string }).runtime).toBe("runsc");
    } finally {
      await fetch(`${t.apiUrl}/sandboxes/${body.sandboxID}`, { method: "DELETE", headers });
    }
  });
});
