// CPU one sandbox's life costs (create, one command, kill, the pool's refill it causes), per
// component, over n lifecycles on a platform with a warm pool: what bounds the staggered and
// burst shapes on a small host.
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fmt, now } from "./lib.mjs";
import { createSandbox, killSandbox, runCmd } from "./platform.mjs";

const TICK_S = 0.01; // USER_HZ = 100 on Linux
const SANDBOX_CPUACCT = "/sys/fs/cgroup/cpuacct/x";
const SAMPLE_MS = 50;

const read = (p) => {
  try {
    return readFileSync(p, "utf8");
  } catch {
    return undefined;
  }
};

/** utime, stime, cutime, cstime (s) and ppid of a process, from /proc/<pid>/stat. */
function procCpu(pid) {
  const s = read(`/proc/${pid}/stat`);
  if (!s) return undefined;
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return {
    comm: s.slice(s.indexOf("(") + 1, s.lastIndexOf(")")),
    ppid: Number(f[1]),
    own: (Number(f[11]) + Number(f[12])) * TICK_S,
    reaped: (Number(f[13]) + Number(f[14])) * TICK_S,
  };
}

/**
 * The host's irq + softirq time (/proc/stat), and its busy time as the scheduler counts it (the
 * root cpuacct group, exact like the per-process and per-cgroup figures; /proc/stat's ticks
 * undercount gVisor's many short ptrace switches) plus irq + softirq (s).
 */
function hostCpu() {
  const [, , , , , , irq, softirq] = readFileSync("/proc/stat", "utf8")
    .split("\n")[0]
    .split(/\s+/)
    .map(Number);
  const kernelIrq = (irq + softirq) * TICK_S;
  const tasks = Number(readFileSync("/sys/fs/cgroup/cpuacct/cpuacct.usage", "utf8")) / 1e9;
  return { kernelIrq, busy: tasks + kernelIrq };
}

const ls = (dir) => {
  try {
    return readdirSync(dir);
  } catch {
    return [];
  }
};
const pids = () => readdirSync("/proc").filter((d) => /^\d+$/.test(d));

/** utime + stime (s) of one thread, from /proc/<pid>/task/<tid>/stat. */
function threadCpu(pid, tid) {
  const s = read(`/proc/${pid}/task/${tid}/stat`);
  if (!s) return undefined;
  const f = s.slice(s.lastIndexOf(")") + 2).split(" ");
  return (Number(f[11]) + Number(f[12])) * TICK_S;
}

const inSandboxCgroup = (cgroupFile) => /cpuacct[^:]*:\/x\//.test(read(cgroupFile) ?? "");

/**
 * Samples what is gone by the end: each of this platform's sandbox cgroups (their cpuacct
 * counters vanish with them) and runtime processes living outside them (gVisor's sandbox and
 * gofer processes, the stubs they start). Counted per thread: cgroup v1 moves threads one by
 * one, and gVisor's sandbox process has some threads inside its sandbox's cgroup (counted
 * there) while others are still outside; a thread's time counts outside only for the samples
 * it was seen outside. Up to SAMPLE_MS before an end is missed.
 */
function sampler(dataDir) {
  const sandboxes = new Map();
  /** Runtime processes outside the sandbox cgroups by pid, with their role; found every 5th tick. */
  const watched = new Map();
  /** CPU (s) each watched thread had at the last sample, by "pid/tid". */
  const threads = new Map();
  const outsideByRole = {};
  let ticks = 0;
  const cost = { user: 0, system: 0 };
  const discover = () => {
    for (const pid of pids()) {
      if (watched.has(pid)) continue;
      const p = procCpu(pid);
      if (!p || !(p.comm === "exe" || p.comm.startsWith("runsc"))) continue;
      // wholly in a sandbox cgroup already: counted there
      if (ls(`/proc/${pid}/task`).every((tid) => inSandboxCgroup(`/proc/${pid}/task/${tid}/cgroup`)))
        continue;
      const argv = (read(`/proc/${pid}/cmdline`) ?? "").split("\0");
      watched.set(
        pid,
        argv.includes("gofer")
          ? "gofer"
          : argv.includes("boot")
            ? "sandbox (sentry)"
            : `${p.comm} ${argv
                .filter((a) => /^[a-z]+$/.test(a))
                .slice(0, 2)
                .join(" ")}`,
      );
    }
  };
  const tick = () => {
    const c0 = process.cpuUsage();
    for (const id of ls(path.join(dataDir, "sandboxes"))) {
      const v = read(path.join(SANDBOX_CPUACCT, id, "cpuacct.usage"));
      if (v) sandboxes.set(id, Number(v) / 1e9);
    }
    if (ticks++ % 5 === 0) discover();
    for (const [pid, role] of watched) {
      const tids = ls(`/proc/${pid}/task`);
      if (!tids.length) watched.delete(pid);
      for (const tid of tids) {
        const key = `${pid}/${tid}`;
        const cpu = threadCpu(pid, tid);
        if (cpu === undefined) continue;
        // a thread first seen now counts from now, unless its process is new to the sampler
        const last = threads.get(key) ?? (ticks > 1 ? 0 : cpu);
        threads.set(key, cpu);
        if (!inSandboxCgroup(`/proc/${pid}/task/${tid}/cgroup`))
          outsideByRole[role] = (outsideByRole[role] ?? 0) + cpu - last;
      }
    }
    const c = process.cpuUsage(c0);
    cost.user += c.user / 1e6;
    cost.system += c.system / 1e6;
  };
  tick();
  const start = { sandboxes: new Map(sandboxes) };
  const timer = setInterval(tick, SAMPLE_MS);
  return {
    stop() {
      tick();
      clearInterval(timer);
      return {
        sandboxes: [...sandboxes].reduce((a, [id, v]) => a + v - (start.sandboxes.get(id) ?? 0), 0),
        runtimeOutside: outsideByRole,
        samplerCost: cost,
      };
    },
  };
}

/** This process's children (the command helper, the guardian): their own and reaped CPU (s). */
function childrenCpu() {
  const out = new Map();
  for (const pid of pids()) {
    const p = procCpu(pid);
    if (p?.ppid === process.pid) out.set(pid, p.own + p.reaped);
  }
  return out;
}

/**
 * n lifecycles, each: POST create (a pool member is claimed), `true` through envd, DELETE, then
 * the pool's refill awaited. Returns CPU seconds per lifecycle by component.
 */
export async function lifecycleCpu(ctx, rt, n) {
  await ctx.platform.warmPool.whenFull(120_000);
  const kids0 = childrenCpu();
  const self0 = process.cpuUsage();
  const host0 = hostCpu();
  const sample = sampler(ctx.dataDir);
  const t0 = now();
  for (let i = 0; i < n; i++) {
    const sb = await createSandbox(ctx, rt);
    await runCmd(sb, "true");
    await killSandbox(ctx, sb.id);
    await ctx.platform.warmPool.whenFull(120_000);
  }
  const seconds = (now() - t0) / 1000;
  const sampled = sample.stop();
  const self = process.cpuUsage(self0);
  const host = hostCpu();
  let helpers = 0;
  for (const [pid, v] of childrenCpu()) helpers += v - (kids0.get(pid) ?? 0);
  const per = (x) => x / n;
  const samplerCost = sampled.samplerCost.user + sampled.samplerCost.system;
  const platform = (self.user + self.system) / 1e6 - samplerCost;
  const outside = Object.values(sampled.runtimeOutside).reduce((a, v) => a + v, 0);
  const kernelIrq = host.kernelIrq - host0.kernelIrq;
  const rows = {
    "platform process (API, orchestrator, proxy; the bench's client calls too)": per(platform),
    "↳ of which in the kernel (its system time)": per(self.system / 1e6 - sampled.samplerCost.system),
    "platform's helpers and the CLIs they ran (runc/runsc, ip, nsenter, mount)": per(helpers),
    "sandbox cgroups (envd, the command; under gVisor its sentry and ptrace stubs)": per(sampled.sandboxes),
    "runtime threads outside them (gVisor's sandbox and gofer before they join it)": per(outside),
  };
  for (const [role, v] of Object.entries(sampled.runtimeOutside)) rows[`↳ runsc ${role}`] = per(v);
  rows["kernel: irq + softirq (network, timers)"] = per(kernelIrq);
  const busy = host.busy - host0.busy - samplerCost;
  const attributed = platform + helpers + sampled.sandboxes + outside + kernelIrq;
  rows["unattributed: other processes, kworkers, the last 50 ms of each sandbox"] = per(busy - attributed);
  rows["host busy, all of it (less the bench's sampling)"] = per(busy);
  return { n, seconds, perLifecycle: rows, samplerCostPerLifecycle: per(samplerCost) };
}

/** The table for the report. */
export function lifecycleCpuSection(L, row, results, runtimes) {
  const rts = runtimes.filter((rt) => results.tti[rt]?.lifecycleCpu);
  if (!rts.length) return;
  L.push(
    "",
    "### CPU per sandbox lifecycle, by component",
    "",
    "n × (POST create from the warm pool, `true` through envd, DELETE, the pool's refill awaited), on the TTI platform; CPU seconds per lifecycle. Sandbox cgroups and gVisor's processes are sampled every 50 ms (they are gone by the end); the bench's own sampling is left out. The host's busy time counts everything, other users of the machine included.",
    "",
    `| component | ${rts.map((rt) => `${rt} (n = ${results.tti[rt].lifecycleCpu.n})`).join(" | ")} |`,
    `|---|${rts.map(() => "---|").join("")}`,
  );
  const keys = new Set(rts.flatMap((rt) => Object.keys(results.tti[rt].lifecycleCpu.perLifecycle)));
  for (const key of keys)
    row([
      key,
      ...rts.map((rt) => {
        const v = results.tti[rt].lifecycleCpu.perLifecycle[key];
        return v === undefined ? "–" : `${fmt(v, 3)} s`;
      }),
    ]);
}
