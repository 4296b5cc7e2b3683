// Shared state and helpers of the bench: options, results, the time budget, stats, processes.
import { spawn, spawnSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const HERE = path.dirname(fileURLToPath(import.meta.url));
export const ROOT = path.resolve(HERE, "..");
export const PKG = (p) => path.join(ROOT, "packages", p);

/** Set once by run.mjs (`init`); every module reads options, results and the budget from here. */
export const bench = {
  opts: undefined,
  T0: Date.now(),
  deadline: Infinity,
  /** End of the current phase (ms since the epoch); see phases(). */
  phaseEnd: undefined,
  interrupted: false,
  results: {
    floors: {},
    scenarios: {},
    pooled: {},
    held: {},
    api: {},
    tti: {},
    cluster: {},
    shipped: {},
    errors: [],
    notes: [],
  },
};

export function init(opts) {
  bench.opts = opts;
  startBudget();
}

/** Starts the budget's clock (again): after the one-time preparation (prepare.mjs). */
export function startBudget() {
  bench.T0 = Date.now();
  bench.deadline = bench.T0 + bench.opts.budgetMin * 60_000;
}

export const timeLeft = () => bench.deadline - Date.now();

/** Kept at the end of the budget for kills, closing the platforms and the report. */
export const CLEANUP_MS = 90_000;

/** End of the current phase (a share of the budget), never later than the budget less cleanup. */
const phaseEnd = () => Math.min(bench.phaseEnd ?? Infinity, bench.deadline - CLEANUP_MS);
export const phaseLeft = () => phaseEnd() - Date.now();

/**
 * Runs the phases in order; each gets its weight's share of the time then left (less cleanup),
 * so time one phase did not use goes to the ones after it, and a phase with a minimum (ms) keeps
 * it whatever the ones before took. `phases`: [[weight, fn, minMs?], ...].
 */
export async function phases(list) {
  for (let i = 0; i < list.length; i++) {
    if (bench.interrupted) return;
    const [weight, fn] = list[i];
    const rest = list.slice(i).reduce((a, [w]) => a + w, 0);
    // time kept for the phases after this one that must measure something (their third
    // element, in ms), so a phase that overruns its share cannot leave them nothing
    const reserved = list.slice(i + 1).reduce((a, [w, , min = 0]) => a + (w > 0 ? min : 0), 0);
    const share = (Math.max(0, timeLeft() - CLEANUP_MS) * weight) / rest;
    bench.phaseEnd = Date.now() + Math.max(0, Math.min(share, timeLeft() - CLEANUP_MS - reserved));
    try {
      await fn();
    } finally {
      bench.phaseEnd = undefined;
    }
  }
}

/**
 * Whether repetition i (counting from 0) of a loop started at t0 should run: always the first
 * `min`; after those, while one more (at the mean so far) fits in `capMs` and in the phase.
 */
export function more(i, t0, min, capMs = Infinity) {
  if (i < min) return true;
  if (bench.interrupted) return false;
  const elapsed = performance.now() - t0;
  const next = elapsed / i;
  return elapsed + next < capMs && next < phaseLeft();
}
export const log = (...a) => console.log(`[bench +${((Date.now() - bench.T0) / 1000).toFixed(0)}s]`, ...a);
export const note = (s) => bench.results.notes.push(s);

export function fail(msg, code = 1) {
  console.error(`bench: ${msg}`);
  process.exit(code);
}

/** Runs one named step; a failure is recorded and the bench goes on. Skipped when out of time. */
export async function scenario(name, fn, { needMs = 30_000 } = {}) {
  if (bench.interrupted) return;
  if (timeLeft() < needMs) {
    bench.results.errors.push({ scenario: name, error: "skipped: time budget exhausted" });
    log(`skip ${name}: out of time`);
    return;
  }
  log(`${name} ...`);
  try {
    await fn();
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    bench.results.errors.push({ scenario: name, error: msg });
    log(`${name} FAILED: ${msg}`);
  }
}

// ---------- stats ----------
export const now = () => performance.now();

export function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  if (s.length === 0) return { n: 0 };
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { n: s.length, p50: q(0.5), p95: q(0.95), p99: q(0.99), max: s[s.length - 1], min: s[0] };
}

/** Times up to `n` calls of fn (after `warmup` untimed ones): at least `min`, then see more(). */
export async function timeMany(n, fn, { warmup = 0, min = 3, capMs } = {}) {
  for (let i = 0; i < warmup; i++) await fn(-1 - i);
  const out = [];
  const t0 = now();
  for (let i = 0; i < n && more(i, t0, min, capMs); i++) {
    const t = now();
    await fn(i);
    out.push(now() - t);
  }
  return out;
}

export function mbps(bytes, ms) {
  return ms > 0 ? bytes / 1e6 / (ms / 1000) : 0;
}

export const fmt = (v, d = 1) =>
  v === undefined || v === null || Number.isNaN(v) ? "–" : Number(v).toFixed(d);
export const MiB = 2 ** 20;

// ---------- processes ----------
export function sh(cmd, args, opt = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", ...opt });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.error?.message || `exit ${r.status}`}`);
  return r.stdout;
}

// Standard streams are pipes, never "ignore": that hands the child the host's /dev/null, and
// runsc (run/restore -detach) chowns its standard streams to the sandbox's user.
export function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    p.stdin.end();
    p.stdout.resume();
    let err = "";
    p.stderr.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("exit", (code) =>
      code === 0
        ? resolve()
        : reject(new Error(`${cmd} ${args.slice(-3).join(" ")}: exit ${code} ${err.slice(0, 300)}`)),
    );
  });
}

export function pipeBytes(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ["pipe", "pipe", "pipe"] });
    p.stdin.end();
    p.stderr.resume();
    let n = 0;
    p.stdout.on("data", (d) => (n += d.length));
    p.on("error", reject);
    p.on("close", () => resolve(n));
  });
}

export function hostMem() {
  const m = readFileSync("/proc/meminfo", "utf8");
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(m)?.[1] ?? 0) * 1024;
  return { total: kb("MemTotal"), used: kb("MemTotal") - kb("MemAvailable"), available: kb("MemAvailable") };
}

/** `concurrency` workers run fn(i) for i in 0..total-1; latency stats and requests per second. */
export async function hammer(total, concurrency, fn) {
  let next = 0;
  const lat = [];
  let errors = 0;
  const t = now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const s = now();
      if (!(await fn(i).catch(() => false))) errors++;
      lat.push(now() - s);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  const secs = (now() - t) / 1000;
  return { ...stats(lat), requests: total, concurrency, errors, perSecond: total / secs };
}

/**
 * An OCI bundle for a bare container of the floors: `args` as its process, `rootfs` read-only
 * as its root, no cgroup of its own; `tmpfs` directories mounted writable. Returns the runtime
 * flags (state root, and for runsc the platform's own: ptrace, no network, no overlay).
 */
export function bareBundle(rt, { bundle, stateRoot, rootfs, args, tmpfs = [] }) {
  mkdirSync(bundle, { recursive: true });
  mkdirSync(stateRoot, { recursive: true });
  sh("runc", ["spec", "--bundle", bundle]);
  const spec = JSON.parse(readFileSync(path.join(bundle, "config.json"), "utf8"));
  spec.process.terminal = false;
  spec.process.args = args;
  spec.root = { path: rootfs, readonly: true };
  spec.linux.cgroupsPath = undefined;
  for (const dir of tmpfs)
    spec.mounts.push({ destination: dir, type: "tmpfs", source: "tmpfs", options: ["nosuid", "nodev"] });
  writeFileSync(path.join(bundle, "config.json"), JSON.stringify(spec));
  return rt === "runsc"
    ? ["--root", stateRoot, "--platform", "ptrace", "--network", "none", "--overlay2", "none"]
    : ["--root", stateRoot];
}
