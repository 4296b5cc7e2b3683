#!/usr/bin/env node
// `pnpm bench`: what users feel, beside the physical floor, on this machine, in one run.
// Usage: node bench/run.mjs [--force] [--runs N] [--held 10,25,50] [--runtimes runsc,runc]
//                           [--api-requests N] [--budget-min M]
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  createWriteStream,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { copyFile, readdir, readFile, writeFile } from "node:fs/promises";
import http from "node:http";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { linePlot } from "./png.mjs";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const ROOT = path.resolve(HERE, "..");
const PKG = (p) => path.join(ROOT, "packages", p);
// biome-ignore lint/suspicious/noUndeclaredEnvVars: the same override the platform tests honour
const CACHED_IMAGES = path.join(process.env.X_TEST_DATA_DIR ?? "/var/tmp/x-test-data", "images");

// ---------- arguments ----------
function parseArgs(argv) {
  const o = {
    force: false,
    runs: 20,
    held: [10, 25, 50],
    runtimes: ["runsc", "runc"],
    apiRequests: 2000,
    budgetMin: 14,
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
    else if (a === "--api-requests") o.apiRequests = Math.max(32, Number(next()));
    else if (a === "--budget-min") o.budgetMin = Number(next());
    else if (a === "--help" || a === "-h") {
      console.log(
        "node bench/run.mjs [--force] [--runs N] [--held 10,25,50] [--runtimes runsc,runc] [--api-requests N] [--budget-min M]",
      );
      process.exit(0);
    } else fail(`unknown argument ${a} (try --help)`);
  }
  if (o.held.some((n) => !Number.isInteger(n))) fail("--held takes integers, e.g. 10,25,50");
  return o;
}

function fail(msg, code = 1) {
  console.error(`bench: ${msg}`);
  process.exit(code);
}

const opts = parseArgs(process.argv.slice(2));
const T0 = Date.now();
const deadline = T0 + opts.budgetMin * 60_000;
const timeLeft = () => deadline - Date.now();
const log = (...a) => console.log(`[bench +${((Date.now() - T0) / 1000).toFixed(0)}s]`, ...a);

// ---------- preconditions ----------
if (process.getuid?.() !== 0) fail("the platform runs containers and sets up networks: run as root", 1);
const cores = os.cpus().length;
const load1 = os.loadavg()[0];
if (load1 > 0.5 * cores && !opts.force) {
  fail(
    `machine is not idle: 1-min loadavg ${load1.toFixed(2)} > ${0.5 * cores} (0.5 × ${cores} cores); results would be noise. Wait, or pass --force.`,
    2,
  );
}
for (const p of [
  PKG("platform/dist/index.js"),
  PKG("envd-client/dist/index.js"),
  PKG("envd/dist/bundle/envd.cjs"),
]) {
  if (!existsSync(p))
    fail(`${path.relative(ROOT, p)} is missing: run \`pnpm build\` first (\`pnpm bench\` does)`);
}

const { DEFAULTS, startPlatform } = await import(PKG("platform/dist/index.js"));
const { createEnvdClient, envdHeaders } = await import(PKG("envd-client/dist/index.js"));

// ---------- stats ----------
const now = () => performance.now();
function stats(samples) {
  const s = [...samples].sort((a, b) => a - b);
  if (s.length === 0) return { n: 0 };
  const q = (p) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)];
  return { n: s.length, p50: q(0.5), p95: q(0.95), max: s[s.length - 1], min: s[0] };
}
async function timeMany(n, fn, { warmup = 0 } = {}) {
  for (let i = 0; i < warmup; i++) await fn(i);
  const out = [];
  for (let i = 0; i < n; i++) {
    const t = now();
    await fn(i);
    out.push(now() - t);
  }
  return out;
}

const results = { scenarios: {}, floors: {}, held: {}, api: {}, errors: [], notes: [] };
async function scenario(name, fn) {
  if (timeLeft() < 30_000) {
    results.errors.push({ scenario: name, error: "skipped: time budget exhausted" });
    log(`skip ${name}: out of time`);
    return;
  }
  log(`${name} ...`);
  try {
    await fn();
  } catch (err) {
    const msg = err instanceof Error ? err.message : String(err);
    results.errors.push({ scenario: name, error: msg });
    log(`${name} FAILED: ${msg}`);
  }
}

// ---------- floors ----------
function sh(cmd, args, opt = {}) {
  const r = spawnSync(cmd, args, { encoding: "utf8", ...opt });
  if (r.status !== 0)
    throw new Error(`${cmd} ${args.join(" ")}: ${r.stderr || r.error?.message || `exit ${r.status}`}`);
  return r.stdout;
}
function run(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ["ignore", "ignore", "pipe"] });
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

let bareSeq = 0;
async function floors(scratch, baseRootfs) {
  await scenario("floor: spawn(true)", async () => {
    results.floors.spawnTrue = stats(await timeMany(opts.runs * 2, () => run("true", []), { warmup: 3 }));
  });
  await scenario("floor: spawn(bash -l -c true)", async () => {
    results.floors.spawnBashTrue = stats(
      await timeMany(opts.runs, () => run("/bin/bash", ["-l", "-c", "true"]), { warmup: 2 }),
    );
  });
  await scenario("floor: local pipe 100 MB", async () => {
    const samples = await timeMany(3, () => pipeBytes("head", ["-c", "100000000", "/dev/zero"]));
    results.floors.pipe100MB = { ...stats(samples), mbps: mbps(100e6, stats(samples).p50) };
  });
  await scenario("floor: local copy 64 MiB", async () => {
    const src = path.join(scratch, "blob");
    await writeFile(src, randomBytes(64 * 1024 * 1024));
    const samples = await timeMany(5, async (i) => {
      await copyFile(src, path.join(scratch, `blob-${i}`));
    });
    const s = stats(samples);
    results.floors.copy64MiB = { ...s, mbps: mbps(64 * 1024 * 1024, s.p50) };
    for (let i = 0; i < 5; i++) rmSync(path.join(scratch, `blob-${i}`), { force: true });
    rmSync(src, { force: true });
  });
  await scenario("floor: loopback HTTP round trip", async () => {
    const server = http.createServer((req, res) => {
      req.resume();
      req.on("end", () => res.end("ok"));
    });
    await new Promise((r) => server.listen(0, "127.0.0.1", r));
    const port = server.address().port;
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = () =>
      new Promise((resolve, reject) => {
        http
          .get({ host: "127.0.0.1", port, path: "/", agent }, (res) => {
            res.resume();
            res.on("end", resolve);
          })
          .on("error", reject);
      });
    try {
      results.floors.httpRoundTrip = stats(await timeMany(opts.runs * 10, get, { warmup: 20 }));
      // fetch (undici) is what the clients use: its floor too
      const url = `http://127.0.0.1:${port}/`;
      results.floors.fetchRoundTrip = stats(
        await timeMany(opts.runs * 10, async () => (await fetch(url)).text(), { warmup: 20 }),
      );
    } finally {
      agent.destroy();
      server.closeAllConnections?.();
      server.close();
    }
  });
  for (const rt of opts.runtimes) {
    await scenario(`floor: bare ${rt} run true`, async () => {
      const bin = rt === "runsc" ? "runsc" : "runc";
      if (!sh("sh", ["-c", `command -v ${bin} || true`]).trim()) throw new Error(`${bin} not installed`);
      const bundle = path.join(scratch, `bundle-${rt}`);
      const stateRoot = path.join(scratch, `state-${rt}`);
      mkdirSync(bundle, { recursive: true });
      mkdirSync(stateRoot, { recursive: true });
      sh("runc", ["spec", "--bundle", bundle]);
      const spec = JSON.parse(readFileSync(path.join(bundle, "config.json"), "utf8"));
      spec.process.terminal = false;
      spec.process.args = ["/bin/true"];
      spec.root = { path: baseRootfs, readonly: true };
      spec.linux.cgroupsPath = undefined;
      writeFileSync(path.join(bundle, "config.json"), JSON.stringify(spec));
      const global =
        rt === "runsc"
          ? ["--root", stateRoot, "--platform", "ptrace", "--network", "none", "--overlay2", "none"]
          : ["--root", stateRoot];
      const samples = await timeMany(
        opts.runs,
        () => run(bin, [...global, "run", "--bundle", bundle, `xbench-${process.pid}-${rt}-${++bareSeq}`]),
        { warmup: 1 },
      );
      results.floors[`bare_${rt}`] = stats(samples);
    });
  }
}

function mbps(bytes, ms) {
  return ms > 0 ? bytes / 1e6 / (ms / 1000) : 0;
}
function pipeBytes(cmd, args) {
  return new Promise((resolve, reject) => {
    const p = spawn(cmd, args, { stdio: ["ignore", "pipe", "ignore"] });
    let n = 0;
    p.stdout.on("data", (d) => (n += d.length));
    p.on("error", reject);
    p.on("close", () => resolve(n));
  });
}

// ---------- platform ----------
async function withPlatform(dataDir, fn) {
  const n = Math.floor(Math.random() * 250);
  const config = {
    ...DEFAULTS,
    dataDir,
    apiPort: 0,
    proxyPort: 0,
    host: "127.0.0.1",
    envdDir: PKG("envd/dist/bundle"),
    networkPrefix: `bn${randomBytes(2).toString("hex").slice(0, 3)}`,
    networkCidr: `10.${n}.0.0/16`,
    maxSandboxesPerTeam: Math.max(200, (opts.held.at(-1) ?? 0) + 10),
  };
  // the bench owns a 10.x/16 that the sandbox tests (10.100-249) may also use: prefer 10.250+
  config.networkCidr = `10.${250 + (n % 6)}.0.0/16`;
  log(`starting the platform (data ${dataDir}, net ${config.networkCidr}, prefix ${config.networkPrefix})`);
  const platform = await startPlatform(config);
  const apiKey = platform.firstApiKey;
  const ctx = {
    platform,
    apiUrl: `http://127.0.0.1:${platform.apiPort}`,
    proxyUrl: `http://127.0.0.1:${platform.proxyPort}`,
    apiKey,
    live: new Set(),
  };
  try {
    await fn(ctx);
  } finally {
    log(`killing ${ctx.live.size} sandboxes left and stopping the platform`);
    await Promise.allSettled([...ctx.live].map((id) => killSandbox(ctx, id)));
    await platform.close({ destroy: true });
  }
}

async function api(ctx, method, p, body) {
  const res = await fetch(`${ctx.apiUrl}${p}`, {
    method,
    headers: { "X-API-Key": ctx.apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

async function createSandbox(ctx, runtime) {
  const sb = await api(ctx, "POST", "/v2/sandboxes", { templateID: "base", runtime, timeout: 900 });
  ctx.live.add(sb.sandboxID);
  const envdOpts = { baseUrl: ctx.proxyUrl, sandboxId: sb.sandboxID, accessToken: sb.envdAccessToken };
  return { id: sb.sandboxID, envdOpts, envd: createEnvdClient(envdOpts) };
}
async function killSandbox(ctx, id) {
  await api(ctx, "DELETE", `/sandboxes/${id}`).catch(() => {});
  ctx.live.delete(id);
}

/** As the e2b client's commands.run: bash -l -c, wait for the end event. Returns stdout bytes. */
async function runCmd(sb, cmd) {
  let bytes = 0;
  let exit;
  for await (const r of sb.envd.process.start({
    process: { cmd: "/bin/bash", args: ["-l", "-c", cmd], envs: {} },
  })) {
    const ev = r.event?.event;
    if (ev?.case === "data" && ev.value.output.case === "stdout") bytes += ev.value.output.value.length;
    if (ev?.case === "end") exit = ev.value;
  }
  if (!exit) throw new Error(`${cmd}: stream ended without an end event`);
  if (exit.exitCode !== 0) throw new Error(`${cmd}: exit ${exit.exitCode} ${exit.error ?? ""}`);
  return bytes;
}

async function memoryOf(dataDir, id) {
  const spec = JSON.parse(
    await readFile(path.join(dataDir, "sandboxes", id, "bundle", "config.json"), "utf8"),
  );
  const rel = spec.linux?.cgroupsPath;
  if (!rel) throw new Error(`sandbox ${id} has no cgroupsPath`);
  // cgroup v2 (unified) or v1 (one hierarchy per controller, as on this host)
  const v2 = existsSync("/sys/fs/cgroup/cgroup.controllers");
  const cg = v2 ? path.join("/sys/fs/cgroup", rel) : path.join("/sys/fs/cgroup/memory", rel);
  const current = Number(
    (await readFile(path.join(cg, v2 ? "memory.current" : "memory.usage_in_bytes"), "utf8")).trim(),
  );
  const stat = Object.fromEntries(
    (await readFile(path.join(cg, "memory.stat"), "utf8"))
      .split("\n")
      .filter(Boolean)
      .map((l) => l.split(" ")),
  );
  const anonBytes = Number((v2 ? stat.anon : stat.total_rss) ?? 0);
  // RSS of every process in the cgroup tree
  let rss = 0;
  const walk = async (dir) => {
    const procs = (await readFile(path.join(dir, "cgroup.procs"), "utf8").catch(() => ""))
      .split("\n")
      .filter(Boolean);
    for (const pid of procs) {
      const st = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
      const m = /VmRSS:\s+(\d+) kB/.exec(st);
      if (m) rss += Number(m[1]) * 1024;
    }
    for (const e of await readdir(dir, { withFileTypes: true }).catch(() => []))
      if (e.isDirectory()) await walk(path.join(dir, e.name));
  };
  await walk(cg);
  return { cgroupCurrent: current, anon: anonBytes, rssSum: rss };
}

async function runtimeScenarios(ctx, rt) {
  const R = {};
  results.scenarios[rt] = R;
  await scenario(`${rt}: create → first run(true), cold`, async () => {
    const samples = [];
    const createOnly = [];
    for (let i = 0; i < opts.runs && timeLeft() > 60_000; i++) {
      const t = now();
      const sb = await createSandbox(ctx, rt);
      const tc = now();
      await runCmd(sb, "true");
      samples.push(now() - t);
      createOnly.push(tc - t);
      await killSandbox(ctx, sb.id);
    }
    R.coldCreateFirstRun = stats(samples);
    R.createApiOnly = stats(createOnly);
  });

  let sb;
  await scenario(`${rt}: run("true") round trip`, async () => {
    sb = await createSandbox(ctx, rt);
    R.runTrue = stats(await timeMany(opts.runs * 3, () => runCmd(sb, "true"), { warmup: 3 }));
  });
  if (!sb) return;
  await scenario(`${rt}: stream 100 MB stdout`, async () => {
    const samples = await timeMany(3, async () => {
      const n = await runCmd(sb, "head -c 100000000 /dev/zero");
      if (n !== 100_000_000) throw new Error(`got ${n} bytes of stdout, expected 100000000`);
    });
    const s = stats(samples);
    R.stream100MB = { ...s, mbps: mbps(100e6, s.p50) };
  });
  await scenario(`${rt}: 64 MiB upload then download`, async () => {
    const size = 64 * 1024 * 1024;
    const blob = randomBytes(size);
    const url = `${ctx.proxyUrl}/files?path=${encodeURIComponent("/tmp/bench.bin")}&username=user`;
    const headers = envdHeaders(sb.envdOpts);
    const up = [];
    const down = [];
    for (let i = 0; i < 3; i++) {
      let t = now();
      const res = await fetch(url, {
        method: "POST",
        headers: { ...headers, "Content-Type": "application/octet-stream" },
        body: blob,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`upload: ${res.status} ${text.slice(0, 200)}`);
      up.push(now() - t);
      t = now();
      const got = await fetch(url, { headers });
      if (!got.ok) throw new Error(`download: ${got.status} ${(await got.text()).slice(0, 200)}`);
      const buf = Buffer.from(await got.arrayBuffer());
      down.push(now() - t);
      if (buf.length !== size) throw new Error(`downloaded ${buf.length} bytes, expected ${size}`);
      if (i === 0 && !buf.equals(blob)) throw new Error("downloaded bytes differ from uploaded");
    }
    const su = stats(up);
    const sd = stats(down);
    R.upload64MiB = { ...su, mbps: mbps(size, su.p50) };
    R.download64MiB = { ...sd, mbps: mbps(size, sd.p50) };
  });
  await scenario(`${rt}: pause → resume (frozen)`, async () => {
    const pause = [];
    const resume = [];
    const resumeToRun = [];
    for (let i = 0; i < Math.min(opts.runs, 10); i++) {
      let t = now();
      await api(ctx, "POST", `/sandboxes/${sb.id}/pause`, { memory: true });
      pause.push(now() - t);
      t = now();
      await api(ctx, "POST", `/v2/sandboxes/${sb.id}/connect`, { timeout: 900 });
      resume.push(now() - t);
      await runCmd(sb, "true");
      resumeToRun.push(now() - t);
    }
    R.pause = stats(pause);
    R.resume = stats(resume);
    R.resumeThenRunTrue = stats(resumeToRun);
  });
  await killSandbox(ctx, sb.id);
}

async function heldScenario(ctx, rt, dataDir, withApiLoad, runtimesLeft) {
  const H = { steps: [], creates: [] };
  results.held[rt] = H;
  const held = [];
  // share what is left fairly between the runtimes still to go; keep 90 s for kills and cleanup
  const myDeadline = Date.now() + (timeLeft() - 90_000) / runtimesLeft;
  const budgetFor = () => myDeadline - Date.now();
  await scenario(`${rt}: idle sandboxes held, stepped ${opts.held.join(",")}`, async () => {
    for (const target of opts.held) {
      const t0 = now();
      while (held.length < target) {
        if (budgetFor() < 0) {
          H.stoppedEarly = `time budget: stopped at ${held.length} held`;
          break;
        }
        const t = now();
        const sb = await createSandbox(ctx, rt);
        await runCmd(sb, "true");
        const ms = now() - t;
        H.creates.push({ heldBefore: held.length, ms });
        held.push(sb);
      }
      if (held.length === 0) break;
      await new Promise((r) => setTimeout(r, 1000)); // let them settle to idle
      const mems = [];
      for (const sb of held)
        mems.push(
          await memoryOf(dataDir, sb.id).catch((err) => {
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
        `  held ${held.length}: create p50 ${fmt(stats(recent).p50)} ms, cgroup mem ${(avg("cgroupCurrent") / 2 ** 20).toFixed(1)} MiB each`,
      );
      if (held.length < target) break;
    }
  });
  if (withApiLoad && held.length > 0) {
    await scenario(`API throughput with ${held.length} sandboxes (32 clients)`, async () => {
      results.api.held = held.length;
      results.api.list = await hammer(ctx, opts.apiRequests, () => "/v2/sandboxes");
      results.api.get = await hammer(ctx, opts.apiRequests, (i) => `/sandboxes/${held[i % held.length].id}`);
    });
  }
  log(`  killing ${held.length} held sandboxes`);
  const tk = now();
  for (let i = 0; i < held.length; i += 8)
    await Promise.allSettled(held.slice(i, i + 8).map((sb) => killSandbox(ctx, sb.id)));
  H.killAllSeconds = (now() - tk) / 1000;
}

async function hammer(ctx, total, pathFor) {
  let next = 0;
  const lat = [];
  let errors = 0;
  const t = now();
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const s = now();
      const res = await fetch(`${ctx.apiUrl}${pathFor(i)}`, { headers: { "X-API-Key": ctx.apiKey } });
      await res.arrayBuffer();
      if (!res.ok) errors++;
      lat.push(now() - s);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const secs = (now() - t) / 1000;
  return { ...stats(lat), requests: total, errors, perSecond: total / secs };
}

function hostMem() {
  const m = readFileSync("/proc/meminfo", "utf8");
  const kb = (k) => Number(new RegExp(`${k}:\\s+(\\d+)`).exec(m)?.[1] ?? 0) * 1024;
  return { total: kb("MemTotal"), used: kb("MemTotal") - kb("MemAvailable") };
}

// ---------- report ----------
const fmt = (v, d = 1) => (v === undefined || Number.isNaN(v) ? "–" : Number(v).toFixed(d));
const MiB = 2 ** 20;

function markdown(meta) {
  const L = [];
  const row = (cells) => L.push(`| ${cells.join(" | ")} |`);
  const f = results.floors;
  const ratio = (a, b) => (a && b ? `${(a / b).toFixed(a / b < 1 ? 2 : 1)}×` : "–");
  L.push(`# Bench ${meta.started}`, "");
  L.push(
    `Host: ${meta.cores} cores, ${fmt(meta.memTotal / 2 ** 30)} GiB, ${meta.kernel}; Node ${process.version}; load1 at start ${fmt(meta.load1, 2)}${meta.forced ? " (**--force**: machine was not idle, numbers are noisy)" : ""}.`,
  );
  L.push(
    `Runs per latency scenario: ${opts.runs}; held steps: ${opts.held.join(", ")}; took ${fmt(meta.seconds, 0)} s.`,
    "",
  );
  L.push(
    "## Floors (same machine, same run)",
    "",
    "| floor | p50 | p95 | max | throughput |",
    "|---|---|---|---|---|",
  );
  const floorRow = (name, s, unit = "ms") =>
    s &&
    row([
      name,
      `${fmt(s.p50, 2)} ${unit}`,
      `${fmt(s.p95, 2)} ${unit}`,
      `${fmt(s.max, 2)} ${unit}`,
      s.mbps ? `${fmt(s.mbps, 0)} MB/s` : "",
    ]);
  floorRow('local `spawn("true")`', f.spawnTrue);
  floorRow('local `spawn("bash -l -c true")`', f.spawnBashTrue);
  for (const rt of opts.runtimes) floorRow(`bare \`${rt} run\` of \`true\``, f[`bare_${rt}`]);
  floorRow("loopback HTTP round trip (node:http keep-alive)", f.httpRoundTrip);
  floorRow("loopback HTTP round trip (fetch)", f.fetchRoundTrip);
  floorRow("local pipe of 100 MB (`head -c`)", f.pipe100MB);
  floorRow("local copy of 64 MiB", f.copy64MiB);
  L.push("", "## What users feel, per runtime", "");
  L.push(
    "| scenario | runtime | p50 | p95 | max | target (DESIGN §8) | vs floor (p50) |",
    "|---|---|---|---|---|---|---|",
  );
  for (const rt of opts.runtimes) {
    const s = results.scenarios[rt] ?? {};
    const ms = (x) => (x ? [`${fmt(x.p50)} ms`, `${fmt(x.p95)} ms`, `${fmt(x.max)} ms`] : ["–", "–", "–"]);
    row([
      "create → first `true` finished, cold",
      rt,
      ...ms(s.coldCreateFirstRun),
      rt === "runc" ? "≤ 120 ms" : "≤ 350 ms",
      `${ratio(s.coldCreateFirstRun?.p50, f[`bare_${rt}`]?.p50)} bare run`,
    ]);
    row(["↳ of which `POST /v2/sandboxes`", rt, ...ms(s.createApiOnly), "", ""]);
    row(["create → first command, warm pool", rt, "n/a", "n/a", "n/a", "≤ 30 ms", "no warm pool yet"]);
    row([
      '`run("true")` round trip via proxy',
      rt,
      ...ms(s.runTrue),
      "≤ 10 ms",
      ratio(s.runTrue?.p50, f.spawnTrue?.p50) +
        " spawn(true); " +
        ratio(s.runTrue?.p50, f.spawnBashTrue?.p50) +
        " local bash -l; " +
        ratio(s.runTrue?.p50, f.fetchRoundTrip?.p50) +
        " fetch RTT",
    ]);
    const tp = (x, target, floor, fname) =>
      x &&
      row([
        `${x.label}`,
        rt,
        `${fmt(x.mbps, 0)} MB/s (${fmt(x.p50, 0)} ms)`,
        `${fmt(x.p95, 0)} ms`,
        `${fmt(x.max, 0)} ms`,
        target,
        floor?.mbps ? `${fmt((x.mbps / floor.mbps) * 100, 0)}% of ${fname}` : "–",
      ]);
    if (s.stream100MB)
      tp({ ...s.stream100MB, label: "stream 100 MB of stdout" }, "–", f.pipe100MB, "local pipe");
    if (s.upload64MiB)
      tp({ ...s.upload64MiB, label: "upload 64 MiB (envd /files)" }, "≥ 150 MB/s", f.copy64MiB, "local copy");
    if (s.download64MiB)
      tp(
        { ...s.download64MiB, label: "download 64 MiB (envd /files)" },
        "≥ 150 MB/s",
        f.copy64MiB,
        "local copy",
      );
    row(["pause (frozen)", rt, ...ms(s.pause), "", ""]);
    row(["resume (frozen) → API answered", rt, ...ms(s.resume), "≤ 20 ms (pause → resume)", ""]);
    row(["resume → `true` finished", rt, ...ms(s.resumeThenRunTrue), "", ""]);
    row(["checkpoint → restore → envd", rt, "not measured", "", "", rt === "runsc" ? "≤ 300 ms" : "–", ""]);
  }
  L.push("", "## Idle sandboxes held at once", "");
  L.push(
    "| runtime | held | create→first run p50 / p95 (this step) | cgroup mem each | anon each | RSS sum each | host used | target |",
    "|---|---|---|---|---|---|---|---|",
  );
  for (const rt of opts.runtimes) {
    const H = results.held[rt];
    if (!H) continue;
    for (const st of H.steps)
      row([
        rt,
        st.held,
        `${fmt(st.create.p50)} / ${fmt(st.create.p95)} ms`,
        `${fmt(st.memEach.cgroupCurrent / MiB)} MiB`,
        `${fmt(st.memEach.anon / MiB)} MiB`,
        `${fmt(st.memEach.rssSum / MiB)} MiB`,
        `${fmt(st.hostUsedBytes / 2 ** 30, 2)} GiB`,
        rt === "runc" ? "≥ 100; ≤ 64 MB each" : "≥ 100; ≤ 96 MB each",
      ]);
    if (H.stoppedEarly) L.push(`\n${rt}: ${H.stoppedEarly}.`);
    if (H.memErrors) L.push(`\n${rt}: memory unreadable for ${H.memErrors} samples (${H.memError}).`);
  }
  if (meta.plot) L.push("", `Plot: \`${meta.plot}\` (create → first run, ms, vs sandboxes already held).`);
  if (results.api.list) {
    L.push(
      "",
      `## API under 32 concurrent clients (${results.api.held} sandboxes held)`,
      "",
      "| call | requests | req/s | p50 | p95 | max | errors |",
      "|---|---|---|---|---|---|---|",
    );
    for (const [k, v] of [
      ["GET /v2/sandboxes (list)", results.api.list],
      ["GET /sandboxes/{id}", results.api.get],
    ])
      row([
        k,
        v.requests,
        fmt(v.perSecond, 0),
        `${fmt(v.p50)} ms`,
        `${fmt(v.p95)} ms`,
        `${fmt(v.max)} ms`,
        v.errors,
      ]);
  }
  L.push("", "## Notes", "");
  for (const n of results.notes) L.push(`- ${n}`);
  for (const e of results.errors) L.push(`- **${e.scenario}**: ${e.error}`);
  return `${L.join("\n")}\n`;
}

// ---------- main ----------
const stamp = new Date().toISOString().replace(/[:.]/g, "-");
const outDir = path.join(HERE, "results");
mkdirSync(outDir, { recursive: true });
const platformLog = createWriteStream(path.join(outDir, `${stamp}.platform.log`));
// the platform logs JSON lines on stderr: keep them out of the console, in a file beside the report
const stderrWrite = process.stderr.write.bind(process.stderr);
process.stderr.write = (chunk, ...rest) => {
  if (String(chunk).startsWith('{"t":')) return platformLog.write(chunk);
  return stderrWrite(chunk, ...rest);
};

const scratch = mkdtempSync(path.join("/var/tmp", "x-bench-"));
const meta = {
  started: new Date().toISOString(),
  cores,
  load1,
  forced: opts.force && load1 > 0.5 * cores,
  memTotal: hostMem().total,
  kernel: os.release(),
};
let interrupted = false;
let cleanupDone = false;
results.notes.push("Cold only: the warm pool does not exist yet, so no warm-pool figure is reported.");
results.notes.push(
  "Commands run as the e2b client does (`/bin/bash -l -c`), over Connect through the proxy with header routing; `spawn(bash -l -c true)` on the host reads the host's login profile, which differs from the sandbox's, so it is shown beside `spawn(true)`, not instead of it.",
);
results.notes.push(
  "Memory per sandbox: the sandbox's memory cgroup usage (`memory.current` on v2, `memory.usage_in_bytes` on v1; includes page cache), its anonymous part (`anon` / `total_rss`), and the sum of VmRSS of the processes in the cgroup tree (shared pages are counted in every process mapping them, so this overstates).",
);
results.notes.push("Checkpoint → restore is not measured by this bench yet.");

async function main() {
  const dataDir = path.join(scratch, "data");
  mkdirSync(dataDir, { recursive: true });
  if (existsSync(CACHED_IMAGES)) {
    sh("cp", ["-al", CACHED_IMAGES, path.join(dataDir, "images")]);
  } else {
    log(
      `no cached images at ${CACHED_IMAGES}: the base image is built first (minutes; not part of any figure)`,
    );
  }
  const baseDirs = existsSync(path.join(dataDir, "images"))
    ? (await readdir(path.join(dataDir, "images"))).filter((d) => d.startsWith("base-"))
    : [];
  let baseRootfs;
  await withPlatform(dataDir, async (ctx) => {
    const dirs = (await readdir(path.join(dataDir, "images"))).filter((d) => d.startsWith("base-"));
    baseRootfs = path.join(dataDir, "images", (dirs.length ? dirs : baseDirs)[0], "rootfs");
    await floors(scratch, baseRootfs);
    for (const rt of opts.runtimes) {
      if (interrupted) break;
      await runtimeScenarios(ctx, rt);
    }
    for (const [i, rt] of opts.runtimes.entries()) {
      if (interrupted) break;
      await heldScenario(ctx, rt, dataDir, i === 0, opts.runtimes.length - i);
    }
  });
}

async function cleanup() {
  if (cleanupDone) return;
  cleanupDone = true;
  for (const rt of ["runc", "runsc"]) {
    const root = path.join(scratch, `state-${rt}`);
    if (!existsSync(root)) continue;
    const bin = rt;
    const out = spawnSync(bin, ["--root", root, "list", "-q"], { encoding: "utf8" }).stdout ?? "";
    for (const id of out.split("\n").filter(Boolean))
      spawnSync(bin, ["--root", root, "delete", "--force", id]);
  }
  spawnSync("sh", ["-c", `umount -R ${scratch}/data/sandboxes/*/rootfs 2>/dev/null; true`]);
  rmSync(scratch, { recursive: true, force: true });
}

process.on("SIGINT", () => {
  interrupted = true;
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
meta.seconds = (Date.now() - T0) / 1000;
const series = opts.runtimes
  .filter((rt) => results.held[rt]?.creates.length)
  .map((rt, i) => ({
    name: rt,
    color: i === 0 ? [200, 40, 40] : [40, 80, 200],
    points: results.held[rt].creates.map((c) => [c.heldBefore, c.ms]),
  }));
if (series.length) {
  meta.plot = `${stamp}-held.png`;
  writeFileSync(path.join(outDir, meta.plot), linePlot(series));
  results.notes.push(
    `Plot colours: ${series.map((s) => `${s.name} ${s.color[0] > 100 ? "red" : "blue"}`).join(", ")}.`,
  );
}
const md = markdown(meta);
writeFileSync(path.join(outDir, `${stamp}.md`), md);
writeFileSync(
  path.join(outDir, `${stamp}.json`),
  `${JSON.stringify({ meta, opts, targets: TARGETS(), ...results }, null, 2)}\n`,
);
platformLog.end();
process.stderr.write = stderrWrite;
console.log(`\n${md}`);
console.log(
  `report: ${path.relative(ROOT, path.join(outDir, `${stamp}.md`))} (+ .json${meta.plot ? ", -held.png" : ""}, .platform.log)`,
);
process.exit(exitCode || (results.errors.some((e) => !e.error.startsWith("skipped")) ? 1 : 0));

function TARGETS() {
  return {
    warmCreateFirstCommandP50Ms: 30,
    coldCreateFirstCommandP50Ms: { runc: 120, runsc: 350 },
    runTrueRoundTripP50Ms: 10,
    upload64MiBDownloadMBps: 150,
    idleHeld: { count: 100, memEachMB: { runc: 64, runsc: 96 } },
    pauseResumeFrozenP50Ms: 20,
    checkpointRestoreEnvdP50Ms: 300,
  };
}
