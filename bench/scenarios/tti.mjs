// Time to interactive through the unchanged public e2b client, the flow independent sandbox
// benchmarks use: Sandbox.create() from base → an identity probe → `node -v`, both read to the
// end; the clock stops when `node -v` returns; the kill is not timed. Sequential, staggered and
// burst shapes on a platform with x serve's defaults, per runtime, with the CPU bound of a burst
// measured in the same run.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { phasesOf, recorder, summarize } from "../breakdown.mjs";
import {
  baseRootfsOf,
  containerFlowFloor,
  freshContainerFlowFloor,
  hostFlowFloor,
  PROBE,
} from "../flow-floors.mjs";
import { bench, log, now, PKG, phaseLeft, scenario, stats } from "../lib.mjs";
import { lifecycleCpu } from "../lifecycle-cpu.mjs";
import { closePlatform, openPlatform, SPANS_CHANNEL } from "../platform.mjs";

const CLOCK_TICKS = 100;

/** Lifecycles over which CPU per component is counted (lifecycle-cpu.mjs). */
const LIFECYCLES = 10;

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

/** One TTI: create, probe, node -v; resolves with its time. `timed` is called before the kill. */
async function flow(Sandbox, started = now(), timed = () => undefined) {
  const sandbox = await Sandbox.create();
  try {
    const probe = await sandbox.commands.run(PROBE);
    if (!probe.stdout.includes("boot=")) throw new Error(`probe printed ${probe.stdout}`);
    const node = await sandbox.commands.run("node -v");
    if (!/^v\d+\./.test(node.stdout)) throw new Error(`node -v printed ${node.stdout}`);
    const ms = now() - started;
    timed(ms);
    return { ms };
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

/** Flows of the spaced shape, and the pause before each. */
const SPACED = 20;
const SPACED_PAUSE_MS = 400;

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

    await scenario(
      `${rt}: the flow's floor, the probe and node -v in an idle bare ${rt} container`,
      async () => {
        bench.results.ttiHostFloor ??= hostFlowFloor();
        const rootfs = baseRootfsOf(dataDir);
        R.floor = await containerFlowFloor(rt, rootfs, path.dirname(dataDir));
        R.freshFloor = await freshContainerFlowFloor(rt, rootfs, path.dirname(dataDir));
        log(
          `${rt}: flow floor p50 ${R.floor.p50.toFixed(0)} ms in a bare container, host ${bench.results.ttiHostFloor.p50.toFixed(0)} ms`,
        );
      },
    );

    await scenario(`${rt}: TTI sequential ×${sequential}`, async () => {
      await settle();
      const samples = [];
      // where each TTI's milliseconds go (breakdown.mjs): listening costs the client a little
      const rec = recorder(SPANS_CHANNEL);
      const phases = [];
      const cpu0 = hostBusyCpuSeconds();
      const t0 = now();
      try {
        for (let i = 0; i < sequential && (i < 10 || phaseLeft() > ((now() - t0) / i) * 2); i++) {
          rec.take();
          const started = now();
          const r = await flow(Sandbox, started, (ms) => phases.push(phasesOf(rec.take(), started, ms)));
          samples.push(r.ms);
        }
      } finally {
        rec.stop();
      }
      const perTti = (hostBusyCpuSeconds() - cpu0) / samples.length;
      R.sequential = { ...stats(samples), ok: samples.length, cpuSecondsPerTti: perTti };
      R.breakdown = summarize(phases);
      R.cpuBoundPerSandboxMs = (perTti / os.cpus().length) * 1000;
      log(`${rt}: TTI p50 ${R.sequential.p50.toFixed(0)} ms, ${perTti.toFixed(3)} CPU s each`);
    });

    // one at a time with a pause between, as a person or an agent that reads each result does:
    // the pool's refill then need not run beside the next sandbox's first commands
    await scenario(`${rt}: TTI spaced ×${SPACED} (${SPACED_PAUSE_MS} ms between)`, async () => {
      await settle();
      const samples = [];
      for (let i = 0; i < SPACED; i++) {
        await new Promise((r) => setTimeout(r, SPACED_PAUSE_MS));
        samples.push((await flow(Sandbox)).ms);
      }
      R.spaced = { ...stats(samples), ok: samples.length, pauseMs: SPACED_PAUSE_MS };
      log(`${rt}: spaced TTI p50 ${R.spaced.p50.toFixed(0)} ms`);
    });

    await scenario(`${rt}: CPU per sandbox lifecycle, by component`, async () => {
      await settle();
      R.lifecycleCpu = await lifecycleCpu(ctx, rt, LIFECYCLES);
      log(
        `${rt}: ${R.lifecycleCpu.perLifecycle["host busy, all of it (less the bench's sampling)"].toFixed(3)} CPU s per lifecycle`,
      );
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
