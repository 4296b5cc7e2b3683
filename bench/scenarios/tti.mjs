// Time to interactive through the unchanged public e2b client, the flow independent sandbox
// benchmarks use: Sandbox.create() from base → an identity probe → `node -v`, both read to the
// end; the clock stops when `node -v` returns; the kill is not timed. Sequential, staggered and
// burst shapes on a platform with x serve's defaults, per runtime, with the CPU bound of a burst
// measured in the same run.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { bench, log, now, PKG, phaseLeft, scenario, stats } from "../lib.mjs";
import { closePlatform, openPlatform } from "../platform.mjs";

/**
 * The identity probe: namespaces, a hash of the cgroup, the boot id, pid 1's command line and
 * the uptime through about ten small processes; it fails when a marker of an earlier sandbox is
 * there (a reused sandbox), then leaves its own in /tmp and /var/tmp.
 */
const PROBE = [
  "set -e",
  "for m in /tmp/.tti-marker /var/tmp/.tti-marker; do if [ -e $m ]; then echo reused; exit 3; fi; done",
  "echo mnt=$(readlink /proc/self/ns/mnt) pid=$(readlink /proc/self/ns/pid) uts=$(readlink /proc/self/ns/uts)",
  "echo cgroup=$(sha256sum /proc/self/cgroup | cut -c1-16)",
  "echo boot=$(cat /proc/sys/kernel/random/boot_id 2>/dev/null || echo -)",
  "echo init=$(tr '\\0' ' ' </proc/1/cmdline)",
  "echo uptime=$(cut -d' ' -f1 /proc/uptime)",
  "date +%s%N | tee /tmp/.tti-marker >/var/tmp/.tti-marker",
].join("; ");

const CLOCK_TICKS = 100;

/**
 * CPU seconds the whole host has spent busy (every process: the platform, its command helper,
 * runc/runsc, the sandboxes, the client). The bench machine runs nothing else, so the busy time
 * of a phase divided by its TTIs is what one TTI costs, the pool's refills included.
 */
function hostBusyCpuSeconds() {
  const [, user, nice, system, , , irq, softirq, steal] = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]
    .split(/\s+/)
    .map(Number);
  return (user + nice + system + irq + softirq + steal) / CLOCK_TICKS;
}

/**
 * The floor of the flow on this host: its two commands run on the host itself, no sandbox, no
 * platform, no network (bash without -l: the host's login profile is not the sandbox's). What a
 * TTI cannot go below here, whatever the platform does; process creation dominates it.
 */
export function hostFlowFloor(runs = 15) {
  const probe = PROBE.replaceAll(".tti-marker", ".tti-floor-marker");
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const t = now();
    const a = spawnSync("bash", ["-c", probe]);
    const b = spawnSync("node", ["-v"]);
    samples.push(now() - t);
    rmSync("/tmp/.tti-floor-marker", { force: true });
    rmSync("/var/tmp/.tti-floor-marker", { force: true });
    if (a.status !== 0 || b.status !== 0)
      throw new Error(`the flow's commands failed on the host: ${a.stderr}`);
  }
  return stats(samples);
}

/** One TTI: create, probe, node -v; resolves with its time. */
async function flow(Sandbox, started = now()) {
  const sandbox = await Sandbox.create();
  try {
    const probe = await sandbox.commands.run(PROBE);
    if (!probe.stdout.includes("boot=")) throw new Error(`probe printed ${probe.stdout}`);
    const node = await sandbox.commands.run("node -v");
    if (!/^v\d+\./.test(node.stdout)) throw new Error(`node -v printed ${node.stdout}`);
    return { ms: now() - started };
  } finally {
    await sandbox.kill().catch(() => undefined);
  }
}

/** Runs `starts.length` flows, each beginning `starts[i]` ms after the first; failures are counted. */
async function shape(Sandbox, starts) {
  const t0 = now();
  const outcomes = await Promise.allSettled(
    starts.map(async (delay) => {
      await new Promise((r) => setTimeout(r, delay));
      return flow(Sandbox);
    }),
  );
  const ok = outcomes.filter((o) => o.status === "fulfilled").map((o) => o.value);
  const errors = outcomes
    .filter((o) => o.status === "rejected")
    .map((o) => String(o.reason?.message ?? o.reason));
  return {
    ...stats(ok.map((o) => o.ms)),
    ok: ok.length,
    failed: errors.length,
    errors: errors.slice(0, 3),
    makespanMs: now() - t0,
  };
}

/** The TTI shapes for one runtime, on a platform of its own with x serve's defaults. */
export async function ttiScenarios(
  dataDir,
  rt,
  { sequential = 100, staggered = 20, bursts = [20, 100] } = {},
) {
  const R = {};
  bench.results.tti[rt] = R;
  const ctx = await openPlatform(dataDir, { defaultRuntime: rt });
  const saved = { ...process.env };
  try {
    Object.assign(process.env, {
      E2B_API_URL: ctx.apiUrl,
      E2B_SANDBOX_URL: ctx.proxyUrl,
      E2B_API_KEY: ctx.apiKey,
    });
    const require = createRequire(PKG("platform/package.json"));
    const { Sandbox } = require("e2b");
    const settle = async () => {
      await ctx.platform.warmPool.whenFull(180_000).catch(() => undefined);
      await new Promise((r) => setTimeout(r, 1000));
    };
    await settle();
    // the client's first calls in a process pay for its own start: one untimed flow
    await flow(Sandbox);

    await scenario(`${rt}: TTI sequential ×${sequential}`, async () => {
      bench.results.ttiHostFloor ??= hostFlowFloor();
      await settle();
      const samples = [];
      const cpu0 = hostBusyCpuSeconds();
      const t0 = now();
      for (let i = 0; i < sequential && (i < 10 || phaseLeft() > ((now() - t0) / i) * 2); i++) {
        const r = await flow(Sandbox);
        samples.push(r.ms);
      }
      const perTti = (hostBusyCpuSeconds() - cpu0) / samples.length;
      R.sequential = { ...stats(samples), ok: samples.length, cpuSecondsPerTti: perTti };
      R.cpuBoundPerSandboxMs = (perTti / os.cpus().length) * 1000;
      log(`${rt}: TTI p50 ${R.sequential.p50.toFixed(0)} ms, ${perTti.toFixed(3)} CPU s each`);
    });

    await scenario(`${rt}: TTI staggered ${staggered} every 200 ms`, async () => {
      await settle();
      R.staggered = await shape(
        Sandbox,
        Array.from({ length: staggered }, (_, i) => i * 200),
      );
    });

    for (const n of bursts) {
      await scenario(`${rt}: TTI burst of ${n}`, async () => {
        await settle();
        const result = await shape(
          Sandbox,
          Array.from({ length: n }, () => 0),
        );
        const boundMs = R.cpuBoundPerSandboxMs ? R.cpuBoundPerSandboxMs * n : undefined;
        R[`burst${n}`] = {
          ...result,
          cpuBoundMs: boundMs,
          boundRatio: boundMs ? result.makespanMs / boundMs : undefined,
        };
      });
    }
  } finally {
    process.env = saved;
    await closePlatform(ctx);
  }
}
