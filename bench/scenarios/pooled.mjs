// Per runtime, on the platform with a warm pool: create → first command when a member is ready.
import { bench, more, now, scenario, stats } from "../lib.mjs";
import { createSandbox, killSandbox, poolReady, runCmd } from "../platform.mjs";

export async function pooledScenarios(ctx, rt) {
  const { opts } = bench;
  const P = { poolSize: ctx.warmPoolSize };
  bench.results.pooled[rt] = P;
  const pool = ctx.platform.warmPool;
  await scenario(`${rt}: create → first run(true), warm pool`, async () => {
    // The pool of (base, rt) appears on the first create of that pair (the default runtime's is
    // filled at start): one untimed create makes sure it exists.
    if (!pool.stats().some((p) => p.runtime === rt)) {
      const first = await createSandbox(ctx, rt);
      await runCmd(first, "true");
      await killSandbox(ctx, first.id);
    }
    const samples = [];
    const createOnly = [];
    const fills = [];
    let hits = 0;
    const t0 = now();
    for (let i = 0; i < opts.runs && more(i, t0, 3); i++) {
      // every create finds a member: wait for the refill (not part of the figure)
      const tf = now();
      await pool.whenFull(120_000);
      fills.push(now() - tf);
      const before = poolReady(ctx, rt);
      const t = now();
      const sb = await createSandbox(ctx, rt);
      const tc = now();
      await runCmd(sb, "true");
      samples.push(now() - t);
      createOnly.push(tc - t);
      // a claim takes a member and the refill boots for hundreds of ms: fewer ready = a hit
      if (poolReady(ctx, rt) < before) hits++;
      await killSandbox(ctx, sb.id);
    }
    P.createFirstRun = stats(samples);
    P.createApiOnly = stats(createOnly);
    P.waitForRefill = stats(fills);
    P.hits = hits;
    P.creates = samples.length;
  });
}
