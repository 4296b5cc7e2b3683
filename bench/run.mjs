#!/usr/bin/env node
// `pnpm bench`: what users feel, beside the physical floor, on this machine, in one run.
// Usage: node bench/run.mjs [--force] [--runs N] [--held 10,25,50,100] [--runtimes runsc,runc]
//                           [--pool N] [--api-requests N] [--budget-min M]
//
// Layout: lib.mjs (options, results, budget, stats), floors.mjs, platform.mjs (embedded platform
// and client calls), scenarios/{runtime,pooled,held}.mjs, report.mjs (targets, Markdown), png.mjs.
import { spawnSync } from "node:child_process";
import { createWriteStream, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { bench, fail, HERE, hostMem, init, log, note, PKG, phases, ROOT, sh, startBudget } from "./lib.mjs";

// biome-ignore lint/suspicious/noUndeclaredEnvVars: the same override the platform tests honour
const CACHED_IMAGES = path.join(process.env.X_TEST_DATA_DIR ?? "/var/tmp/x-test-data", "images");
const USAGE =
  "node bench/run.mjs [--force] [--runs N] [--held 10,25,50,100] [--runtimes runsc,runc] [--pool N] [--api-requests N] [--budget-min M]";

// ---------- arguments ----------
function parseArgs(argv) {
  const o = {
    force: false,
    runs: 15,
    held: [10, 25, 50, 100],
    runtimes: ["runsc", "runc"],
    pool: 2,
    apiRequests: 2000,
    budgetMin: 14,
    only: undefined,
    tti: { sequential: 100, staggered: 20, bursts: [20, 100] },
  };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const next = () => {
      const v = argv[++i];
      if (v === undefined) fail(`${a} needs a value`);
      return v;
    };
    if (a === "--force") o.force = true;
    else if (a === "--runs") o.runs = Math.max(3, Number(next()));
    else if (a === "--held")
      o.held = next()
        .split(",")
        .map(Number)
        .filter((n) => n > 0)
        .sort((x, y) => x - y);
    else if (a === "--runtimes") o.runtimes = next().split(",").filter(Boolean);
    else if (a === "--pool") o.pool = Math.max(1, Number(next()));
    else if (a === "--api-requests") o.apiRequests = Math.max(32, Number(next()));
    else if (a === "--budget-min") o.budgetMin = Number(next());
    else if (a === "--only") o.only = next().split(",").filter(Boolean);
    else if (a === "--tti-sequential") o.tti.sequential = Math.max(10, Number(next()));
    else if (a === "--tti-bursts")
      o.tti.bursts = next()
        .split(",")
        .map(Number)
        .filter((n) => n > 0);
    else if (a === "--help" || a === "-h") {
      console.log(USAGE);
      process.exit(0);
    } else fail(`unknown argument ${a} (try --help)`);
  }
  if (o.held.some((n) => !Number.isInteger(n))) fail("--held takes integers, e.g. 10,25,50,100");
  if (!Number.isInteger(o.pool)) fail("--pool takes an integer ≥ 1");
  for (const rt of o.runtimes) if (rt !== "runsc" && rt !== "runc") fail(`unknown runtime ${rt}`);
  for (const part of o.only ?? [])
    if (!["tti", "pool", "cold", "held", "cluster", "shipped", "files"].includes(part))
      fail(`unknown part ${part}`);
  return o;
}

const opts = parseArgs(process.argv.slice(2));
init(opts);
const wanted = (part) => !opts.only || opts.only.includes(part);

// ---------- preconditions ----------
if (process.getuid?.() !== 0) fail("the platform runs containers and sets up networks: run as root", 1);
const cores = os.cpus().length;
/**
 * The bench starts on an idle machine: `pnpm bench` builds first, and the one-time preparation
 * builds images, which lift the load for a while: up to 90 s for it to settle.
 */
async function waitForIdle() {
  let load1 = os.loadavg()[0];
  for (let waited = 0; load1 > 0.5 * cores && !opts.force && waited < 90; waited += 5) {
    await new Promise((r) => setTimeout(r, 5000));
    load1 = os.loadavg()[0];
  }
  if (load1 > 0.5 * cores && !opts.force) {
    fail(
      `machine is not idle: 1-min loadavg ${load1.toFixed(2)} > ${0.5 * cores} (0.5 × ${cores} cores); results would be noise. Wait, or pass --force.`,
      2,
    );
  }
  return load1;
}
const firstLoad1 = await waitForIdle();
for (const p of [
  PKG("platform/dist/index.js"),
  PKG("envd-client/dist/index.js"),
  PKG("envd/dist/bundle/envd.cjs"),
]) {
  if (!existsSync(p))
    fail(`${path.relative(ROOT, p)} is missing: run \`pnpm build\` first (\`pnpm bench\` does)`);
}

const { floors } = await import("./floors.mjs");
const { baseRootfsOf } = await import("./flow-floors.mjs");
const { closePlatform, openPlatform } = await import("./platform.mjs");
const { runtimeScenarios } = await import("./scenarios/runtime.mjs");
const { pooledScenarios } = await import("./scenarios/pooled.mjs");
const { heldScenario } = await import("./scenarios/held.mjs");
const { ttiScenarios } = await import("./scenarios/tti.mjs");
const { clusterScenarios } = await import("./scenarios/cluster.mjs");
const { shippedScenarios } = await import("./scenarios/shipped.mjs");
const { filesScenarios } = await import("./scenarios/files.mjs");
const { markdown, TARGETS, targetRows } = await import("./report.mjs");
const { linePlot } = await import("./png.mjs");
const { results } = bench;

// ---------- output ----------
const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const outDir = path.join(HERE, "results");
mkdirSync(outDir, { recursive: true });
const platformLog = createWriteStream(path.join(outDir, `${stamp}.platform.log`));
// the platforms log JSON lines into a file beside the report, not onto the console
bench.platformLog = platformLog;

const scratch = mkdtempSync(path.join("/var/tmp", "x-bench-"));
// one-time builds (the base image, the shipped templates) before the clock starts, then the
// machine settles again and the budget begins
const { prepareOnce } = await import("./prepare.mjs");
const preparing = Date.now();
const prepared = await prepareOnce({ cachedImages: CACHED_IMAGES, scratch, shipped: wanted("shipped") });
const load1 = prepared ? await waitForIdle() : firstLoad1;
const prepareSeconds = (Date.now() - preparing) / 1000;
startBudget();
const meta = {
  prepareSeconds,
  started: new Date().toISOString(),
  cores,
  load1,
  forced: opts.force && load1 > 0.5 * cores,
  memTotal: hostMem().total,
  kernel: os.release(),
  warmPoolSize: opts.pool,
};
note(
  `Two platforms, one after the other, each on its own data directory: first warm pool on (\`warmPoolSize: ${opts.pool}\`) for the pooled creates only, then warm pool off (\`warmPoolSize: 0\`) for every cold figure, the held sandboxes and the API. Each pooled create is made after \`warmPool.whenFull()\` so it finds a member (the wait is not timed; "took a member" counts creates after which the pool held one fewer); the pool's refill boot starts at the claim and runs beside the first command, as it would for a user (under runc, a create that leaves a member ready and comes 250 ms or more after the last one has its refill start 250 ms after the claim: the warm pool's settle).`,
);
note(
  "Commands run as the e2b client does (`/bin/bash -l -c`), over Connect through the proxy with header routing; `spawn(bash -l -c true)` on the host reads the host's login profile, which differs from the sandbox's, so it is shown beside `spawn(true)`, not instead of it.",
);
note(
  "10,000 small files: the SDK's `files.write([...])` path, multipart `POST /files` through the proxy (one part per file, its filename the path), 1,000 parts per request, 10 requests; listed with the SDK's `files.list` path, Connect `filesystem.ListDir` depth 1, counted.",
);
note(
  "Checkpoint (runsc only): `POST /sandboxes/{id}/pause` (frozen), then `platform.orchestrator.deepPause(id)` in process (must say `checkpointed`), then `POST /sandboxes/{id}/connect` restores; envd answering = its `/health` through the proxy answers. The §8 target is judged on restore → envd answering; the checkpoint itself is shown beside it.",
);
note(
  "Snapshot: 100 MB of new files (10 × 10 MB from /dev/urandom) written in the sandbox, then `POST /sandboxes/{id}/snapshots` with no body, as the client sends it: the platform keeps a memory image where it can (kind `memory`, gVisor: sandboxes from it continue the processes) and the files otherwise (kind `files`: they boot afresh); the kind it answered is shown. Sandboxes are then created with `templateID` = the returned snapshotID on the pool-off platform, and the first checks the files are there.",
);
note(
  "Memory per sandbox: the sandbox's memory cgroup usage (`memory.current` on v2, `memory.usage_in_bytes` on v1; includes page cache; the figure judged against §8), its anonymous part (`anon` / `total_rss`), and the sum of VmRSS of the processes in the cgroup tree (shared pages count in every process mapping them, so this overstates). MB = 10^6 bytes in the targets table.",
);

/** A data directory of the run's own, with the base image prepareOnce made sure of hard-linked in. */
async function prepareDataDir(name) {
  const dataDir = path.join(scratch, name);
  mkdirSync(dataDir, { recursive: true });
  sh("cp", ["-al", CACHED_IMAGES, path.join(dataDir, "images")]);
  return dataDir;
}

async function main() {
  const nrt = opts.runtimes.length;
  // a store of its own per runtime: each platform makes its first team and key
  const ttiDirs = {};
  if (wanted("tti")) for (const rt of opts.runtimes) ttiDirs[rt] = await prepareDataDir(`data-tti-${rt}`);
  // Phase weights: each phase gets its weight's share of the time then left (see phases()). The
  // held sandboxes come as soon as the platform without a warm pool is up, before the cold and
  // file figures that watch their share: phases before them that overran (bursts, template
  // builds) once left them nothing at the end. The warm pool platform comes first, then the one
  // without (both are never up at once).
  const clusterDir = wanted("cluster") ? await prepareDataDir("data-cluster") : undefined;
  const poolDir = await prepareDataDir("data-pool");
  const coldDir = await prepareDataDir("data-cold");
  const filesPhase = async () => {
    const ctx = await openPlatform(await prepareDataDir("data-files"), { warmPoolSize: 0 });
    try {
      await filesScenarios(ctx, opts.runtimes, scratch);
    } finally {
      await closePlatform(ctx);
    }
  };
  let cold;
  try {
    await phases([
      ...opts.runtimes.map((rt) => [
        wanted("tti") ? (rt === "runsc" ? 3 : 1.5) : 0,
        () => (wanted("tti") ? ttiScenarios(ttiDirs[rt], rt, opts.tti) : undefined),
      ]),
      [
        wanted("cluster") ? 0.8 : 0,
        () => (clusterDir ? clusterScenarios(clusterDir, { runs: opts.runs }) : undefined),
      ],
      [
        wanted("pool") ? 1.2 * nrt : 0,
        async () => {
          if (!wanted("pool")) return;
          const ctx = await openPlatform(poolDir, {
            warmPoolSize: opts.pool,
            defaultRuntime: opts.runtimes[0],
          });
          try {
            for (const rt of opts.runtimes) await pooledScenarios(ctx, rt);
          } finally {
            await closePlatform(ctx);
          }
        },
      ],
      // runc first: the platform that installs the templates builds them, much faster under runc
      ...[...opts.runtimes]
        .sort((a, b) => (a === "runc" ? -1 : b === "runc" ? 1 : 0))
        .map((rt) => [
          wanted("shipped") ? (rt === "runsc" ? 2 : 1) : 0,
          () => (wanted("shipped") ? shippedScenarios(rt, CACHED_IMAGES) : undefined),
        ]),
      [
        wanted("cold") || wanted("held") ? 0.8 : 0,
        async () => {
          if (!wanted("cold") && !wanted("held")) return;
          cold = await openPlatform(coldDir, { warmPoolSize: 0, defaultRuntime: opts.runtimes[0] });
          await floors(scratch, baseRootfsOf(coldDir));
        },
      ],
      ...opts.runtimes.map((rt, i) => [
        wanted("held") ? (rt === "runsc" ? 2.5 : 1.5) : 0,
        () => (cold && wanted("held") ? heldScenario(cold, rt, { withApiLoad: i === 0 }) : undefined),
        // idle memory per sandbox is always measured: a minute kept for each runtime's
        HELD_MIN_MS,
      ]),
      ...opts.runtimes.map((rt) => [
        wanted("cold") ? (rt === "runsc" ? 3.5 : 2.5) : 0,
        () => (wanted("cold") ? runtimeScenarios(cold, rt) : undefined),
      ]),
      [wanted("files") ? 1.5 * nrt : 0, () => (wanted("files") ? filesPhase() : undefined)],
    ]);
  } finally {
    if (cold) await closePlatform(cold);
  }
}

/** The time kept for each runtime's held sandboxes, whatever the phases before them took. */
const HELD_MIN_MS = 60_000;

let cleanupDone = false;
async function cleanup() {
  if (cleanupDone) return;
  cleanupDone = true;
  // the floor's bare containers (the platforms remove their own sandboxes on close)
  for (const rt of ["runc", "runsc"]) {
    const root = path.join(scratch, `state-${rt}`);
    if (!existsSync(root)) continue;
    const out = spawnSync(rt, ["--root", root, "list", "-q"], { encoding: "utf8" }).stdout ?? "";
    for (const id of out.split("\n").filter(Boolean))
      spawnSync(rt, ["--root", root, "delete", "--force", id]);
  }
  // anything a failed close left mounted under the scratch directory, deepest first
  const mounts = spawnSync("sh", ["-c", `grep -o ' ${scratch}/[^ ]*' /proc/self/mounts | sort -r`], {
    encoding: "utf8",
  }).stdout;
  for (const m of (mounts ?? "")
    .split("\n")
    .map((s) => s.trim())
    .filter(Boolean)) {
    log(`unmounting leftover ${m}`);
    spawnSync("umount", ["-l", m]);
  }
  rmSync(scratch, { recursive: true, force: true });
}

process.on("SIGINT", () => {
  bench.interrupted = true;
  log("interrupted: finishing the current step and cleaning up (Ctrl-C again to abort hard)");
  process.once("SIGINT", () => process.exit(130));
});

let exitCode = 0;
try {
  await main();
} catch (err) {
  exitCode = 1;
  results.errors.push({
    scenario: "run",
    error: err instanceof Error ? (err.stack ?? err.message) : String(err),
  });
  console.error(`bench: ${err instanceof Error ? err.message : err}`);
} finally {
  await cleanup();
}
meta.seconds = (Date.now() - bench.T0) / 1000;
const COLORS = { runsc: [200, 40, 40], runc: [40, 80, 200] };
const series = opts.runtimes
  .filter((rt) => results.held[rt]?.creates.length)
  .map((rt) => ({
    name: rt,
    color: COLORS[rt],
    points: results.held[rt].creates.map((c) => [c.heldBefore, c.ms]),
  }));
if (series.length) {
  meta.plot = `${stamp}-held.png`;
  writeFileSync(
    path.join(outDir, meta.plot),
    linePlot(series, { title: "create to first run (ms) vs sandboxes held", xLabel: "held", yLabel: "ms" }),
  );
  note(`Plot colours: ${series.map((s) => `${s.name} ${s.name === "runsc" ? "red" : "blue"}`).join(", ")}.`);
}
const md = markdown(meta);
writeFileSync(path.join(outDir, `${stamp}.md`), md);
writeFileSync(
  path.join(outDir, `${stamp}.json`),
  `${JSON.stringify({ meta, opts, targets: TARGETS, targetResults: targetRows(), ...results }, null, 2)}\n`,
);
platformLog.end();
console.log(`\n${md}`);
console.log(
  `report: ${path.relative(ROOT, path.join(outDir, `${stamp}.md`))} (+ .json${meta.plot ? ", -held.png" : ""}, .platform.log)`,
);
process.exit(exitCode || (results.errors.some((e) => !e.error.startsWith("skipped")) ? 1 : 0));
