/**
 * Restart safety (issue 4): the real `x serve` is SIGKILLed with sandboxes running and paused
 * under both runtimes, started again on the same data dir, and must adopt every one of them;
 * then everything is killed and nothing may be left on the host.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { Sandbox } from "e2b";
import { createRuntime } from "../../src/runtime/create-runtime.js";
import { setFrozen } from "../../src/runtime/freezer.js";
import { containerCgroup } from "../../src/runtime/oci-spec.js";
import { counterPassed, readCounter, startCounter } from "../helpers/counter.js";
import { pointE2bClient, TEST_DATA_DIR } from "../helpers/platform.js";

const X_BIN = path.resolve(__dirname, "../../../cli/bin/x.mjs");
const RUNTIMES = ["runc", "runsc"] as const;
type Runtime = (typeof RUNTIMES)[number];

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

function sh(cmd: string, args: string[]): string {
  try {
    return execFileSync(cmd, args, { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch {
    return "";
  }
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("x serve restart", () => {
  const dataDir = mkdtempSync("/var/tmp/x-restart-");
  const prefix = `r${Math.floor(Math.random() * 36 ** 3)
    .toString(36)
    .padStart(3, "0")}`;
  // outside the 10.100-249 ranges other test platforms draw from
  const cidr = `10.${250 + Math.floor(Math.random() * 5)}.0.0/16`;
  let apiPort = 0;
  let proxyPort = 0;
  let child: ChildProcess | undefined;
  let output = "";
  let apiKey = "";
  let restoreEnv = () => {};

  /** Starts `x serve` and resolves once its ready line (and the key line on first start) is out. */
  async function serve(): Promise<void> {
    output = "";
    const proc = spawn(
      process.execPath,
      [
        X_BIN,
        "serve",
        "--data-dir",
        dataDir,
        "--host",
        "127.0.0.1",
        "--port",
        String(apiPort),
        "--proxy-port",
        String(proxyPort),
        "--network-prefix",
        prefix,
        "--network-cidr",
        cidr,
        "--runtime",
        "runc",
        // no warm pool: its refills would add network namespaces while the in-flight create is watched
        "--pool-size",
        "0",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    child = proc;
    proc.stdout!.on("data", (d) => {
      output += d;
    });
    proc.stderr!.on("data", (d) => {
      output += d;
    });
    // a base image rebuild here would mean the cached one was not reused: fail fast
    const deadline = Date.now() + 60_000;
    while (!/x: point the e2b client/.test(output)) {
      if (proc.exitCode !== null || proc.signalCode !== null)
        throw new Error(`x serve exited (${proc.exitCode ?? proc.signalCode}):\n${output}`);
      if (Date.now() > deadline) throw new Error(`x serve not ready in 60 s:\n${output.slice(0, 4000)}`);
      await sleep(50);
    }
    const key = /first team API key \(shown once, keep it\): (\S+)/.exec(output)?.[1];
    if (key) apiKey = key;
  }

  function exited(proc: ChildProcess): Promise<void> {
    if (proc.exitCode !== null || proc.signalCode !== null) return Promise.resolve();
    return new Promise((resolve) => proc.once("exit", () => resolve()));
  }

  async function api(method: string, p: string, body?: unknown) {
    const res = await fetch(`http://127.0.0.1:${apiPort}${p}`, {
      method,
      headers: { "X-API-Key": apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  /** What the host holds that carries this platform's names or lives under its data dir. */
  function leftovers() {
    const netns = sh("ip", ["netns", "list"])
      .split("\n")
      .filter((l) => l.startsWith(`${prefix}-`));
    const links = sh("ip", ["-o", "link", "show"])
      .split("\n")
      .filter((l) => new RegExp(`^\\d+: ${prefix}h\\d+`).test(l));
    const mounts = readFileSync("/proc/mounts", "utf8")
      .split("\n")
      .filter((l) => l.split(" ")[1]?.startsWith(`${dataDir}/`));
    const containers = Object.fromEntries(
      RUNTIMES.map((r) => {
        const root = path.join(dataDir, "runtime", r, "root");
        const ids = existsSync(root)
          ? sh(r, ["--root", root, "list", "--quiet"]).split("\n").filter(Boolean)
          : [];
        return [r, ids];
      }),
    );
    const table = sh("nft", ["list", "tables"])
      .split("\n")
      .filter((l) => l.trim() === `table inet ${prefix}_net`);
    // runsc sandbox and gofer processes, runc container inits carry the data dir on their command line
    const processes = readdirSync("/proc")
      .filter((pid) => /^\d+$/.test(pid) && Number(pid) !== process.pid)
      .filter((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(`${dataDir}/`);
        } catch {
          return false;
        }
      });
    return { netns, links, mounts, containers, table, processes };
  }

  beforeAll(async () => {
    // the cached base image, hard-linked so nothing is rebuilt
    mkdirSync(path.join(dataDir, "images"));
    execFileSync("cp", ["-al", `${path.join(TEST_DATA_DIR, "images")}/.`, path.join(dataDir, "images")]);
    apiPort = await freePort();
    proxyPort = await freePort();
    await serve();
    expect(apiKey).not.toBe("");
    restoreEnv = pointE2bClient({
      apiUrl: `http://127.0.0.1:${apiPort}`,
      proxyUrl: `http://127.0.0.1:${proxyPort}`,
      apiKey,
    });
  });

  afterAll(async () => {
    restoreEnv();
    if (child && child.exitCode === null && child.signalCode === null) {
      child.kill("SIGKILL");
      await exited(child);
    }
    // whatever a failed run left: containers, mounts, network, firewall table
    for (const r of RUNTIMES) {
      const runtime = await createRuntime(r, { stateDir: path.join(dataDir, "runtime", r) }).catch(
        () => undefined,
      );
      for (const id of (await runtime?.list().catch(() => [])) ?? []) {
        // a sandbox frozen through its cgroup cannot be deleted (gVisor's sentry cannot answer)
        await setFrozen(containerCgroup({ id }), false).catch(() => false);
        await runtime
          ?.delete({ id, netnsPath: `/run/netns/${prefix}-${id}` })
          .catch((err) => process.stderr.write(`cleanup: ${r} delete ${id}: ${err}\n`));
      }
    }
    const left = leftovers();
    for (const m of left.mounts.reverse()) sh("umount", ["-l", m.split(" ")[1]!]);
    for (const l of left.links) sh("ip", ["link", "delete", l.split(":")[1]!.trim().split("@")[0]!]);
    for (const n of left.netns) sh("ip", ["netns", "delete", n.split(" ")[0]!]);
    if (left.table.length) sh("nft", ["delete", "table", "inet", `${prefix}_net`]);
    for (const pid of left.processes) {
      try {
        process.kill(Number(pid), "SIGKILL");
      } catch {
        // gone already
      }
    }
    rmSync(dataDir, { recursive: true, force: true });
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
          throw new Error(`create answered ${created.status} ${JSON.stringify(created.body)}:\n${output}`);
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

    // and one per runtime that stays paused, to be killed while still frozen after the restart
    const pausedToKill: string[] = [];
    for (const runtime of RUNTIMES) {
      const created = await api("POST", "/sandboxes", { templateID: "base", timeout: 600, runtime });
      expect(created.status).toBe(201);
      expect((await api("POST", `/sandboxes/${created.body.sandboxID}/pause`)).status).toBe(204);
      pausedToKill.push(created.body.sandboxID);
    }

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
    const first = child!;
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
    expect(output.split("\n").filter((l) => /"level":"(warn|error)"/.test(l))).toEqual([]);

    const listed = await api("GET", "/v2/sandboxes?state=running,paused");
    expect(listed.status).toBe(200);
    const states = Object.fromEntries(
      (listed.body as Array<{ sandboxID: string; state: string }>).map((s) => [s.sandboxID, s.state]),
    );
    expect(states).toEqual({
      ...Object.fromEntries(Object.entries(ids).map(([id, s]) => [id, s.paused ? "paused" : "running"])),
      ...Object.fromEntries(pausedToKill.map((id) => [id, "paused"])),
    });
    for (const id of pausedToKill) {
      const killed = await api("DELETE", `/sandboxes/${id}`);
      if (killed.status !== 204) throw new Error(`kill of paused ${id}: ${killed.status}\n${output}`);
    }

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
          `counter stopped in ${id} (${JSON.stringify(s)}): ${now}\n${ps.stdout ?? ps}\n${output}\n` +
            readFileSync(path.join(dataDir, "sandboxes", id, "console.log"), "utf8").slice(-3000),
        );
      }
      expect((await sandbox.commands.run("echo alive")).stdout).toBe("alive\n");
      expect((await api("GET", `/sandboxes/${id}`)).body.state).toBe("running");
    }

    for (const id of Object.keys(ids)) expect((await api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    const second = child!;
    second.kill("SIGTERM");
    await exited(second);
    expect(second.exitCode).toBe(0);

    expect(leftovers()).toEqual({
      netns: [],
      links: [],
      mounts: [],
      containers: { runc: [], runsc: [] },
      table: [],
      processes: [],
    });
  });
});
