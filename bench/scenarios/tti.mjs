// Time to interactive through the unchanged public e2b client, the flow independent sandbox
// benchmarks use: Sandbox.create() from base → an identity probe → `node -v`, both read to the
// end; the clock stops when `node -v` returns; the kill is not timed. Sequential, staggered and
// burst shapes on a platform with x serve's defaults, per runtime, with the CPU bound of a burst
// measured in the same run.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import { bench, log, now, PKG, phaseLeft, scenario } from "../lib.mjs";
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

/** CPU seconds of this process (the platform and the client) and of its reaped children (runc, runsc, ip, …). */
function processCpuSeconds() {
  const { user, system } = process.cpuUsage();
  const fields = readFileSync("/proc/self/stat", "utf8").split(") ")[1].split(" ");
  // after the command: state is field 3, so cutime (16) and cstime (17) are at 13 and 14
  const children = (Number(fields[13]) + Number(fields[14])) / CLOCK_TICKS;
  return (user + system) / 1e6 + children;
}

/** CPU seconds a sandbox's cgroup has used (its processes, gVisor's sentry included). */
function sandboxCpuSeconds(id) {
  for (const file of [`/sys/fs/cgroup/cpuacct/x/${id}/cpuacct.usage`, `/sys/fs/cgroup/x/${id}/cpu.stat`]) {
    try {
      const text = readFileSync(file, "utf8");
      if (file.endsWith("cpuacct.usage")) return Number(text.trim()) / 1e9;
      return Number(/usage_usec (\d+)/.exec(text)?.[1] ?? 0) / 1e6;
    } catch {
      // not this cgroup layout
    }
  }
  return 0;
}

function quantiles(samples) {
  const s = [...samples].sort((a, b) => a - b);
  if (s.length === 0) return { n: 0 };
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { n: s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: s[s.length - 1] };
}

/** One TTI: create, probe, node -v; resolves with the time and the CPU the sandbox's cgroup used. */
async function flow(Sandbox, started = now()) {
  const sandbox = await Sandbox.create();
  try {
    const probe = await sandbox.commands.run(PROBE);
    if (!probe.stdout.includes("boot=")) throw new Error(`probe printed ${probe.stdout}`);
    const node = await sandbox.commands.run("node -v");
    if (!/^v\d+\./.test(node.stdout)) throw new Error(`node -v printed ${node.stdout}`);
    return { ms: now() - started, cpu: sandboxCpuSeconds(sandbox.sandboxId) };
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
    ...quantiles(ok.map((o) => o.ms)),
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
      await settle();
      const samples = [];
      let cpu = 0;
      const cpu0 = processCpuSeconds();
      const t0 = now();
      for (let i = 0; i < sequential && (i < 10 || phaseLeft() > ((now() - t0) / i) * 2); i++) {
        const r = await flow(Sandbox);
        samples.push(r.ms);
        cpu += r.cpu;
      }
      const perTti = (processCpuSeconds() - cpu0 + cpu) / samples.length;
      R.sequential = { ...quantiles(samples), ok: samples.length, cpuSecondsPerTti: perTti };
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
