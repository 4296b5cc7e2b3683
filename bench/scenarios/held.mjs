// Idle sandboxes held at once, stepped up until the steps, the time budget or the host run out;
// with the most held, the API under 32 concurrent clients.
import os from "node:os";
import {
  bench,
  CLEANUP_MS,
  fmt,
  hammer,
  hostMem,
  log,
  MiB,
  now,
  phaseLeft,
  scenario,
  stats,
  timeLeft,
} from "../lib.mjs";
import { createSandbox, killSandbox, memoryOf, runCmd } from "../platform.mjs";

/** Stop stepping up when the host has less than this share of its memory available. */
const MIN_AVAILABLE_SHARE = 0.15;

/**
 * Held whatever the phase's share of the budget says (while the whole budget lasts), so that idle
 * memory per sandbox is always measured: earlier phases that overran their share once left
 * this one nothing, and it stopped at 0 held.
 */
const MIN_HELD = 5;

/** Runs in a phase of its own (see phases()): the steps go on while the phase has time left. */
export async function heldScenario(ctx, rt, { withApiLoad }) {
  const { opts } = bench;
  const H = { steps: [], creates: [] };
  bench.results.held[rt] = H;
  const held = [];
  // keep time in the phase for the API load and for the kills (about 150 ms a sandbox)
  const budgetFor = () => phaseLeft() - (withApiLoad ? 20_000 : 0) - held.length * 150;
  await scenario(`${rt}: idle sandboxes held, stepped ${opts.held.join(",")}`, async () => {
    for (const target of opts.held) {
      const t0 = now();
      while (held.length < target) {
        const owed = held.length < Math.min(MIN_HELD, target) && timeLeft() - CLEANUP_MS > 10_000;
        if (budgetFor() < 0 && !owed) {
          H.stoppedEarly = `time budget: stopped at ${held.length} held`;
          break;
        }
        const mem = hostMem();
        if (mem.available < MIN_AVAILABLE_SHARE * mem.total) {
          H.stoppedEarly = `host memory: ${fmt(mem.available / 2 ** 30, 2)} GiB available at ${held.length} held`;
          break;
        }
        const t = now();
        let sb;
        try {
          sb = await createSandbox(ctx, rt);
          await runCmd(sb, "true");
        } catch (err) {
          if (sb) held.push(sb);
          H.stoppedEarly = `create failed at ${held.length} held: ${err instanceof Error ? err.message : err}`;
          break;
        }
        H.creates.push({ heldBefore: held.length, ms: now() - t });
        held.push(sb);
      }
      if (held.length === 0) break;
      await new Promise((r) => setTimeout(r, 1000)); // let them settle to idle
      const mems = [];
      for (const sb of held)
        mems.push(
          await memoryOf(ctx.dataDir, sb.id).catch((err) => {
            H.memErrors = (H.memErrors ?? 0) + 1;
            H.memError = err instanceof Error ? err.message : String(err);
            return undefined;
          }),
        );
      const ok = mems.filter(Boolean);
      const avg = (k) => (ok.length ? ok.reduce((a, m) => a + m[k], 0) / ok.length : 0);
      const host = hostMem();
      const recent = H.creates.filter((c) => c.heldBefore >= (H.steps.at(-1)?.held ?? 0)).map((c) => c.ms);
      H.steps.push({
        held: held.length,
        stepSeconds: (now() - t0) / 1000,
        create: stats(recent),
        memEach: { cgroupCurrent: avg("cgroupCurrent"), anon: avg("anon"), rssSum: avg("rssSum") },
        hostUsedBytes: host.used,
        load1: os.loadavg()[0],
      });
      log(
        `  held ${held.length}: create p50 ${fmt(stats(recent).p50)} ms, cgroup mem ${(avg("cgroupCurrent") / MiB).toFixed(1)} MiB each`,
      );
      if (held.length < target) break;
    }
    H.maxHeld = held.length;
  });
  if (withApiLoad && held.length > 0) {
    await scenario(
      `API throughput with ${held.length} sandboxes (32 clients)`,
      async () => {
        const get = (p) => async () => {
          const res = await fetch(`${ctx.apiUrl}${p}`, { headers: { "X-API-Key": ctx.apiKey } });
          await res.arrayBuffer();
          return res.ok;
        };
        bench.results.api.held = held.length;
        bench.results.api.list = await hammer(opts.apiRequests, 32, (i) => get("/v2/sandboxes")(i));
        bench.results.api.get = await hammer(opts.apiRequests, 32, (i) =>
          get(`/sandboxes/${held[i % held.length].id}`)(i),
        );
      },
      { needMs: 20_000 },
    );
  }
  log(`  killing ${held.length} held sandboxes`);
  const tk = now();
  for (let i = 0; i < held.length; i += 8)
    await Promise.allSettled(held.slice(i, i + 8).map((sb) => killSandbox(ctx, sb.id)));
  H.killAllSeconds = (now() - tk) / 1000;
}
