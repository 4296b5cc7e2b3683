/**
 * Restart safety (issue 4): the real `x serve` is SIGKILLed with sandboxes running and paused
 * under both runtimes, started again on the same data dir, and must adopt every one of them;
 * then everything is killed and nothing may be left on the host. A volume mounted by one of
 * them keeps its files and its one loop device through the restart.
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { Sandbox } from "e2b";
import { counterPassed, readCounter, startCounter } from "../helpers/counter.js";
import { pointE2bClient } from "../helpers/platform.js";
import { exited, NOTHING_LEFT, RUNTIMES, sh, XServe } from "../helpers/x-serve.js";

type Runtime = (typeof RUNTIMES)[number];

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("x serve restart", () => {
  // no warm pool: its refills would add network namespaces while the in-flight create is watched
  const x = new XServe(["--runtime", "runc", "--pool-size", "0"]);
  const { dataDir, prefix } = x;
  let restoreEnv = () => {};
  const api = (method: string, p: string, body?: unknown) => x.api(method, p, body);
  const serve = () => x.start();

  beforeAll(async () => {
    await serve();
    expect(x.apiKey).not.toBe("");
    restoreEnv = pointE2bClient(x);
  });

  afterAll(async () => {
    restoreEnv();
    await x.cleanup();
  });

  it("adopts running and paused sandboxes of both runtimes after a SIGKILL, and leaves nothing behind", async () => {
    // on the sandbox's own disk (not /tmp): what a platform restart must keep
    const counter = "/home/user/counter";
    const advanced = (s: Sandbox, from: number) =>
      counterPassed(s, from, { file: counter, timeoutMs: 15_000 });

    // two sandboxes per runtime: one stays running, one is paused (frozen)
    const ids: Record<string, { runtime: Runtime; paused: boolean; count: number }> = {};
    for (const runtime of RUNTIMES) {
      for (const paused of [false, true]) {
        const created = await api("POST", "/sandboxes", { templateID: "base", timeout: 600, runtime });
        if (created.status !== 201)
          throw new Error(`create answered ${created.status} ${JSON.stringify(created.body)}:\n${x.output}`);
        const id = created.body.sandboxID as string;
        const sandbox = await Sandbox.connect(id);
        await sandbox.files.write("/home/user/kept.txt", `kept by ${id}`);
        await startCounter(sandbox, counter);
        const count = await advanced(sandbox, 0);
        expect(count).toBeGreaterThan(0);
        if (paused) expect((await api("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
        ids[id] = { runtime, paused, count };
      }
    }

    // a sandbox with a volume: the volume's files must come through the restart on one disk
    const volume = await api("POST", "/volumes", { name: "kept", sizeMB: 32 });
    expect(volume.status).toBe(201);
    const { volumeID, token } = volume.body as { volumeID: string; token: string };
    const withVolume = await api("POST", "/sandboxes", {
      templateID: "base",
      timeout: 600,
      volumeMounts: [{ name: "kept", path: "/mnt/kept" }],
    });
    expect(withVolume.status).toBe(201);
    const volumeSandbox = withVolume.body.sandboxID as string;
    await (await Sandbox.connect(volumeSandbox)).commands.run("echo before > /mnt/kept/before.txt");
    const content = (method: string, p: string, body?: string) =>
      fetch(`${x.apiUrl}/volumecontent/${volumeID}/${p}`, {
        method,
        headers: { Authorization: `Bearer ${token}` },
        body,
      });

    // and one per runtime that stays paused, to be killed while still frozen after the restart
    const pausedToKill: string[] = [];
    for (const runtime of RUNTIMES) {
      const created = await api("POST", "/sandboxes", { templateID: "base", timeout: 600, runtime });
      expect(created.status).toBe(201);
      expect((await api("POST", `/sandboxes/${created.body.sandboxID}/pause`)).status).toBe(204);
      pausedToKill.push(created.body.sandboxID);
    }

    // and one with an egress policy, which the restarted platform must enforce as before
    const DENIED = "198.51.100.0/24";
    const guarded = await api("POST", "/sandboxes", {
      templateID: "base",
      timeout: 600,
      runtime: "runc",
      network: { denyOut: [DENIED] },
    });
    expect(guarded.status).toBe(201);
    const guardedId = guarded.body.sandboxID as string;
    const refusedOut = async () => {
      const s = await Sandbox.connect(guardedId);
      return (await s.commands.run("curl -sS -m 3 http://198.51.100.1/ || echo rc=$?")).stdout;
    };
    expect(await refusedOut()).toContain("rc=7");

    // the SIGKILL lands while one more sandbox is starting: its network namespace is there, its
    // root filesystem and container on the way, envd far from up
    const netnsNow = () => readdirSync("/run/netns").filter((n) => n.startsWith(`${prefix}-`));
    const before = new Set(netnsNow());
    const inFlight = api("POST", "/sandboxes", { templateID: "base", timeout: 600, runtime: "runsc" }).catch(
      (err: Error) => err,
    );
    let starting: string | undefined;
    for (const deadline = Date.now() + 30_000; !starting && Date.now() < deadline; await sleep(1)) {
      starting = netnsNow()
        .find((n) => !before.has(n))
        ?.slice(prefix.length + 1);
    }
    if (!starting) throw new Error(`no netns for the in-flight create: ${JSON.stringify(await inFlight)}`);
    const first = x.child!;
    first.kill("SIGKILL");
    await exited(first);
    // the request died with the server (fetch fails; an Error from another realm under jest)
    expect(await inFlight).not.toHaveProperty("status");
    await serve();
    // the half-started one is gone, with every part of it
    expect((await api("GET", `/sandboxes/${starting}`)).status).toBe(404);
    const runscRoot = path.join(dataDir, "runtime", "runsc", "root");
    expect(sh("runsc", ["--root", runscRoot, "list", "--quiet"]).split("\n")).not.toContain(starting);
    expect(netnsNow()).not.toContain(`${prefix}-${starting}`);
    expect(existsSync(path.join(dataDir, "sandboxes", starting!))).toBe(false);
    // adoption went without complaint
    expect(x.output.split("\n").filter((l) => /"level":"(warn|error)"/.test(l))).toEqual([]);

    const listed = await api("GET", "/v2/sandboxes?state=running,paused");
    expect(listed.status).toBe(200);
    const states = Object.fromEntries(
      (listed.body as Array<{ sandboxID: string; state: string }>).map((s) => [s.sandboxID, s.state]),
    );
    expect(states).toEqual({
      [guardedId]: "running",
      [volumeSandbox]: "running",
      ...Object.fromEntries(Object.entries(ids).map(([id, s]) => [id, s.paused ? "paused" : "running"])),
      ...Object.fromEntries(pausedToKill.map((id) => [id, "paused"])),
    });
    // the policy is in the rebuilt firewall, and still refuses at once
    expect(sh("nft", ["list", "set", "inet", `${prefix}_net`, "deny_out"])).toContain(DENIED);
    expect(await refusedOut()).toContain("rc=7");
    expect((await api("GET", `/sandboxes/${guardedId}`)).body.network).toMatchObject({ denyOut: [DENIED] });
    expect((await api("DELETE", `/sandboxes/${guardedId}`)).status).toBe(204);
    for (const id of pausedToKill) {
      const killed = await api("DELETE", `/sandboxes/${id}`);
      if (killed.status !== 204) throw new Error(`kill of paused ${id}: ${killed.status}\n${x.output}`);
    }

    // the volume: written by the API after the restart, seen by the adopted sandbox and back,
    // through one loop device (a second one on the same image would be a second, diverging ext4)
    expect((await content("PUT", "file?path=/after.txt", "after")).status).toBe(201);
    const adopted = await Sandbox.connect(volumeSandbox);
    expect((await adopted.commands.run("cat /mnt/kept/before.txt /mnt/kept/after.txt")).stdout).toBe(
      "before\nafter",
    );
    await adopted.commands.run("echo again > /mnt/kept/again.txt");
    expect(await (await content("GET", "file?path=/again.txt")).text()).toBe("again\n");
    const image = path.join(dataDir, "volumes", volumeID, "disk.img");
    expect(sh("losetup", ["--associated", image, "--noheadings"]).trim().split("\n")).toHaveLength(1);
    expect((await api("DELETE", `/volumes/${volumeID}`)).status).toBe(409);
    expect((await api("DELETE", `/sandboxes/${volumeSandbox}`)).status).toBe(204);
    expect((await api("DELETE", `/volumes/${volumeID}`)).status).toBe(204);

    for (const [id, s] of Object.entries(ids)) {
      // connect resumes the paused ones; the frozen counter then goes on from where it stopped
      const sandbox = await Sandbox.connect(id);
      expect(await sandbox.files.read("/home/user/kept.txt")).toBe(`kept by ${id}`);
      const now = await readCounter(sandbox, counter);
      expect(now).toBeGreaterThanOrEqual(s.count);
      const later = await advanced(sandbox, now);
      if (later <= now) {
        const ps = await sandbox.commands.run("ps -eo pid,stat,etime,cmd").catch((e) => e);
        throw new Error(
          `counter stopped in ${id} (${JSON.stringify(s)}): ${now}\n${ps.stdout ?? ps}\n${x.output}\n` +
            readFileSync(path.join(dataDir, "sandboxes", id, "console.log"), "utf8").slice(-3000),
        );
      }
      expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
      expect((await api("GET", `/sandboxes/${id}`)).body.state).toBe("running");
    }

    for (const id of Object.keys(ids)) expect((await api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    const second = x.child!;
    second.kill("SIGTERM");
    await exited(second);
    expect(second.exitCode).toBe(0);

    expect(x.leftovers()).toEqual(NOTHING_LEFT);
  });
});
