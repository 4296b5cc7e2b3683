// The floors of the TTI flow, measured in the same run as the TTIs: the flow's two commands run
// on the host itself, and by bash inside an already running bare container of each runtime (the
// base template's rootfs, no envd, platform or network). What a TTI cannot go below.

import { spawnSync } from "node:child_process";
import { closeSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { bareBundle, now, stats } from "./lib.mjs";

/**
 * The identity probe: namespaces, a hash of the cgroup, the boot id, pid 1's command line and
 * the uptime through about ten small processes; it fails when a marker of an earlier sandbox is
 * there (a reused sandbox), then leaves its own in /tmp and /var/tmp.
 */
export const PROBE = [
  "set -e",
  "for m in /tmp/.tti-marker /var/tmp/.tti-marker; do if [ -e $m ]; then echo reused; exit 3; fi; done",
  "echo mnt=$(readlink /proc/self/ns/mnt) pid=$(readlink /proc/self/ns/pid) uts=$(readlink /proc/self/ns/uts)",
  "echo cgroup=$(sha256sum /proc/self/cgroup | cut -c1-16)",
  "echo boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -)",
  "echo init=$(tr '\\0' ' ' </proc/1/cmdline)",
  "echo uptime=$(cut -d' ' -f1 /proc/uptime)",
  "date +%s%N | tee /tmp/.tti-marker >/var/tmp/.tti-marker",
].join("; ");

/**
 * On the host: no sandbox, no platform, no network (bash without -l: the host's login profile
 * is not the sandbox's). Process creation dominates it. Timed by one bash on the host, as the
 * container floors are timed inside: a spawn from the bench's own process would add the cost
 * of forking it, which grows with its memory (the platform runs in it).
 */
export function hostFlowFloor(runs = 15) {
  const timed = TIMED_FLOW.replaceAll(".tti-marker", ".tti-floor-marker");
  const r = spawnSync(
    "bash",
    ["-c", `for i in $(seq 0 ${runs}); do ${timed} || exit $?; done`, "bash", floorProbe()],
    {
      encoding: "utf8",
    },
  );
  const samples = [...(r.stdout ?? "").matchAll(/^(\d+\.\d+) (\d+\.\d+)$/gm)].map(
    (m) => (Number(m[2]) - Number(m[1])) * 1000,
  );
  if (r.status !== 0 || samples.length !== runs + 1)
    throw new Error(
      `the flow's commands failed on the host: exit ${r.status} ${(r.stderr || "").slice(0, 300)}`,
    );
  return stats(samples.slice(1)); // the first warms the caches
}

/** The probe with markers of its own, so the host's floor never meets a sandbox's. */
const floorProbe = () => PROBE.replaceAll(".tti-marker", ".tti-floor-marker");

/**
 * Timed by bash inside the container ($EPOCHREALTIME), so the cost of `runc/runsc exec` itself
 * is left out: a sandbox's envd spawns its commands from inside, as this bash does. The marker
 * is removed after the clock stops.
 */
const TIMED_FLOW =
  't0=$EPOCHREALTIME; bash -c "$1" >/dev/null || exit 3; node -v >/dev/null || exit 4; t1=$EPOCHREALTIME; rm -f /tmp/.tti-marker /var/tmp/.tti-marker; echo "$t0 $t1"';

/**
 * The base template's root filesystem under a data directory: the one its running sandboxes have
 * below their overlay (the build the platform uses), else the newest.
 */
export function baseRootfsOf(dataDir) {
  const images = path.join(dataDir, "images");
  const inUse = new RegExp(`lowerdir=(?:[^,]*:)?(${images}/base-[^/,:]+/rootfs)`).exec(
    readFileSync("/proc/self/mounts", "utf8"),
  );
  if (inUse) return inUse[1];
  const dirs = readdirSync(images)
    .filter((d) => d.startsWith("base-"))
    .map((d) => path.join(images, d))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (!dirs.length) throw new Error(`no base image under ${images}`);
  return path.join(dirs[0], "rootfs");
}

/**
 * A bare container of `rt` (the base rootfs, `sleep infinity` as its process, tmpfs /tmp and
 * /var/tmp where the probe leaves its markers) for `use`, deleted afterwards. `use` gets a
 * function that runs the flow once by a bash that `exec` starts: `flow` is the time bash
 * measured inside, `withExec` the same from the host, the runtime's exec included. The state
 * root is the one the bench's cleanup sweeps (`state-<rt>` under the scratch directory), so a
 * bench stopped hard leaves nothing.
 */
async function inBareContainer(rt, rootfs, scratch, name, use) {
  const bundle = path.join(scratch, `bundle-${name}-${rt}`);
  const stateRoot = path.join(scratch, `state-${rt}`);
  const global = bareBundle(rt, {
    bundle,
    stateRoot,
    rootfs,
    args: ["/bin/sleep", "infinity"],
    tmpfs: ["/tmp", "/var/tmp"],
  });
  const id = `xbench-${process.pid}-${name}-${rt}`;
  // files as standard streams, never the host's /dev/null (runsc chowns them)
  writeFileSync(path.join(bundle, "stdin"), "");
  const stdin = openSync(path.join(bundle, "stdin"), "r");
  const out = openSync(path.join(bundle, "console.log"), "a");
  try {
    const started = spawnSync(rt, [...global, "run", "--detach", "--bundle", bundle, id], {
      stdio: [stdin, out, out],
    });
    if (started.status !== 0)
      throw new Error(
        `${rt} run: exit ${started.status} ${readFileSync(path.join(bundle, "console.log"), "utf8").slice(-300)}`,
      );
    return await use(() => {
      const t = now();
      const r = spawnSync(rt, [...global, "exec", id, "/bin/bash", "-c", TIMED_FLOW, "bash", PROBE], {
        encoding: "utf8",
      });
      const outer = now() - t;
      const m = /^(\d+\.\d+) (\d+\.\d+)$/m.exec(r.stdout ?? "");
      if (r.status !== 0 || !m)
        throw new Error(`${rt} exec of the flow: exit ${r.status} ${(r.stderr || r.stdout).slice(0, 300)}`);
      return { flow: (Number(m[2]) - Number(m[1])) * 1000, withExec: outer };
    });
  } finally {
    closeSync(stdin);
    closeSync(out);
    spawnSync(rt, [...global, "delete", "--force", id]);
    rmSync(bundle, { recursive: true, force: true });
  }
}

/**
 * Inside one bare container of `rt`, started once and idle: the probe and `node -v` run `runs`
 * times (one warm-up first), so its caches are warm as a long-used sandbox's are.
 */
export function containerFlowFloor(rt, rootfs, scratch, runs = 15) {
  return inBareContainer(rt, rootfs, scratch, "flow", (runFlow) => {
    const flow = [];
    const withExec = [];
    for (let i = -1; i < runs; i++) {
      const r = runFlow();
      if (i < 0) continue;
      flow.push(r.flow);
      withExec.push(r.withExec);
    }
    return { ...stats(flow), withExec: stats(withExec) };
  });
}

/**
 * The flow once in each of `runs` new bare containers of `rt`, each left idle first as a pool
 * member is before its create (1.2 s under gVisor, whose clock calibrates in ~1 s; 0.2 s under
 * runc): what a TTI's new sandbox pays for caches nothing has filled yet (gVisor keeps a page
 * cache of its own per sandbox, so every new one reads its binaries afresh).
 */
export async function freshContainerFlowFloor(rt, rootfs, scratch, runs = 5) {
  const idleMs = rt === "runsc" ? 1200 : 200;
  const flow = [];
  for (let i = 0; i < runs; i++)
    flow.push(
      await inBareContainer(rt, rootfs, scratch, `fresh${i}`, async (runFlow) => {
        await sleep(idleMs);
        return runFlow().flow;
      }),
    );
  return { ...stats(flow), idleMs };
}
