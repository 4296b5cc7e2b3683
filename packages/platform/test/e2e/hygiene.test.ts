/**
 * Nothing outlives the platform: a taken port fails the start before anything is booted, a
 * SIGTERM while starting takes down what the start had made (its firewall table included),
 * and a SIGKILL leaves nothing once its guardian's `x cleanup` has run: no warm-pool member,
 * no helper process, no firewall table; sandboxes made and killed under both runtimes leave no
 * cgroup, loop device, mount or network. The real `x serve` (runc by default).
 */
import { existsSync, readdirSync, readFileSync } from "node:fs";
import net from "node:net";
import { processStartTime } from "../../src/lib/owned-process.js";
import { containerCgroup } from "../../src/runtime/oci-spec.js";
import { exited, NOTHING_LEFT, sh, XServe } from "../helpers/x-serve.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Polls `probe` until it returns true, for at most `ms`; returns the last answer. */
async function eventually(probe: () => boolean, ms = 60_000): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(200)) if (probe()) return true;
  return probe();
}

/** Pids of the processes whose parent is `pid`. */
function childrenOf(pid: number): { pid: number; cmd: string }[] {
  return sh("ps", ["-o", "pid=,args=", "--ppid", String(pid)])
    .split("\n")
    .filter(Boolean)
    .map((line) => {
      const [p, ...cmd] = line.trim().split(/\s+/);
      return { pid: Number(p), cmd: cmd.join(" ") };
    });
}

const alive = (pid: number) => processStartTime(pid) !== undefined;

describe("nothing outlives the platform (runc)", () => {
  const x = new XServe(["--runtime", "runc", "--pool-size", "1"]);

  afterAll(async () => {
    await x.cleanup();
  });

  it("a taken port: x serve exits non-zero at once, naming the port and its flag, and leaves nothing", async () => {
    const taken = net.createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    const port = (taken.address() as net.AddressInfo).port;
    try {
      const proc = await x.spawn({}, ["--tls-port", String(port)]);
      await exited(proc);
      expect(proc.exitCode).toBe(1);
      expect(x.output).toContain(`port ${port} on 127.0.0.1 is in use`);
      expect(x.output).toContain("--tls-port");
      expect(x.leftovers()).toEqual(NOTHING_LEFT);
      expect(existsSync(`${x.dataDir}/run/${x.prefix}/platform.pid`)).toBe(false);
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });

  it("SIGTERM while starting (its firewall made) takes down what the start made and exits 0", async () => {
    const proc = await x.spawn({ X_TEST_CRASH_AT: "start:firewall-made", X_TEST_CRASH_SIGNAL: "SIGTERM" });
    await exited(proc);
    expect(x.output).toContain("stopped by SIGTERM while starting; nothing is left running");
    expect(proc.exitCode).toBe(0);
    expect(x.leftovers()).toEqual(NOTHING_LEFT);
  });

  it("SIGKILL: the warm pool's member, the firewall's trace reader and the table go with it", async () => {
    await x.start();
    // its member is booted and its trace reader runs
    expect(await eventually(() => x.leftovers().netns.length === 1)).toBe(true);
    const helpers = childrenOf(x.child!.pid!);
    const trace = helpers.find((c) => c.cmd.includes("nft monitor trace"));
    expect(trace).toBeDefined();
    await x.kill("SIGKILL");
    // the kernel ends it with its parent (pdeathsig)
    expect(await eventually(() => !alive(trace!.pid), 5000)).toBe(true);
    expect(await eventually(() => JSON.stringify(x.leftovers()) === JSON.stringify(NOTHING_LEFT))).toBe(true);
    expect(x.leftovers()).toEqual(NOTHING_LEFT);
    await x.cleanupDone();
    const log = readFileSync(`${x.dataDir}/run/${x.prefix}/cleanup.log`, "utf8");
    expect(log).toContain("removed a warm pool member left by a previous run");
    expect(log).toContain("no sandbox left: the firewall table and networks removed");
    // and the next start on the same data is a normal one
    await x.start();
    expect((await x.api("GET", "/health")).status).toBe(200);
  });

  it("sandboxes created and killed under both runtimes leave no cgroup, loop device, mount or network", async () => {
    if (x.ended) await x.start();
    const ids: string[] = [];
    for (const runtime of ["runc", "runsc"]) {
      // a few at a time, as clients do
      for (let batch = 0; batch < 3; batch++) {
        const made = await Promise.all(
          Array.from({ length: 4 }, () =>
            x.api("POST", "/sandboxes", { templateID: "base", runtime, timeout: 600 }),
          ),
        );
        for (const m of made) expect(m.status).toBe(201);
        ids.push(...made.map((m) => m.body.sandboxID as string));
      }
    }
    for (const id of ids) expect((await x.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    const left = x.leftovers();
    const mentions = (lines: string[]) => lines.filter((l) => ids.some((id) => l.includes(id)));
    expect({
      netns: mentions(left.netns),
      mounts: mentions(left.mounts),
      loops: mentions(left.loops),
      containers: mentions([...left.containers.runc, ...left.containers.runsc]),
      cgroups: ids.flatMap((id) => cgroupsOf(id)),
    }).toEqual({ netns: [], mounts: [], loops: [], containers: [], cgroups: [] });
    // and once stopped, nothing at all
    await x.kill("SIGTERM");
    expect(x.leftovers()).toEqual(NOTHING_LEFT);
  });
});

/** The cgroups of a sandbox, in every controller this host mounts (v1 or v2). */
function cgroupsOf(id: string): string[] {
  const roots = readdirSync("/sys/fs/cgroup").map((c) => `/sys/fs/cgroup/${c}`);
  return [...roots, "/sys/fs/cgroup"]
    .map((root) => `${root}${containerCgroup({ id })}`)
    .filter((dir) => existsSync(dir));
}
