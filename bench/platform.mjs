// The embedded platform the bench measures, and the client calls it makes (as the e2b client does).
import { randomBytes } from "node:crypto";
import { existsSync } from "node:fs";
import { readdir, readFile } from "node:fs/promises";
import path from "node:path";
import { bench, log, PKG } from "./lib.mjs";

const { DEFAULTS, SPANS_CHANNEL, createLogger, startPlatform } = await import(PKG("platform/dist/index.js"));
const { createEnvdClient, envdHeaders } = await import(PKG("envd-client/dist/index.js"));

export { DEFAULTS, envdHeaders, SPANS_CHANNEL };

/** Network ranges taken by the platforms of this process that are up. */
const usedNets = new Set();

/**
 * Starts a platform on `dataDir` with the given warm pool size. Close it with closePlatform, which
 * kills every sandbox it made.
 */
export async function openPlatform(
  dataDir,
  { warmPoolSize = DEFAULTS.warmPoolSize, defaultRuntime, reuse = false },
) {
  const { opts } = bench;
  // the sandbox tests use 10.100-249: the bench keeps to 10.250-255
  // a range is taken while its platform is up (closePlatform gives it back); six at once at most
  if (usedNets.size >= 6) throw new Error("the bench's six network ranges are all taken by open platforms");
  let n = Math.floor(Math.random() * 6);
  while (usedNets.has(n)) n = (n + 1) % 6;
  usedNets.add(n);
  const config = {
    ...DEFAULTS,
    dataDir,
    apiPort: 0,
    proxyPort: 0,
    host: "127.0.0.1",
    envdDir: PKG("envd/dist/bundle"),
    networkPrefix: `bn${randomBytes(2).toString("hex").slice(0, 3)}`,
    networkCidr: `10.${250 + n}.0.0/16`,
    maxSandboxesPerTeam: Math.max(200, (opts.held.at(-1) ?? 0) + 10),
    warmPoolSize,
    // X_BENCH_CPU_FAIRNESS=0 measures the neighbours without the platform reweighing busy sandboxes
    cpuFairness: process.env.X_BENCH_CPU_FAIRNESS !== "0",
    defaultRuntime,
  };
  log(
    `starting a platform (warm pool ${warmPoolSize}, data ${dataDir}, net ${config.networkCidr}, prefix ${config.networkPrefix})`,
  );
  // the platform's JSON lines go to a file beside the report, not to the console
  const logger = createLogger({
    level: process.env.BENCH_LOG_LEVEL ?? "info",
    format: "json",
    destination: bench.platformLog ?? process.stderr,
  });
  // a bench killed half-way leaves nothing: its guardian runs `x cleanup` (the prefix is random,
  // so no later start would find what it left)
  const cleanupCommand = {
    argv: [
      process.execPath,
      PKG("cli/bin/x.mjs"),
      "cleanup",
      "--data-dir",
      dataDir,
      "--network-prefix",
      config.networkPrefix,
      "--network-cidr",
      config.networkCidr,
    ],
  };
  const platform = await startPlatform(config, { log: logger, cleanupCommand }).catch((err) => {
    usedNets.delete(n);
    throw err;
  });
  const ctx = {
    net: n,
    platform,
    dataDir,
    warmPoolSize,
    apiUrl: `http://127.0.0.1:${platform.apiPort}`,
    proxyUrl: `http://127.0.0.1:${platform.proxyPort}`,
    apiKey: platform.firstApiKey,
    live: new Set(),
  };
  // a data dir kept between runs (reuse) has given out its first key: it gets a new one
  if (!ctx.apiKey && reuse) {
    const team = await platform.defaultTeam();
    ctx.apiKey = (await platform.store.teams.createKey(team.id, "bench")).key;
  }
  if (!ctx.apiKey) {
    await closePlatform(ctx);
    throw new Error("the platform did not hand out a first API key (data dir reused?)");
  }
  return ctx;
}

export async function closePlatform(ctx) {
  if (ctx.closed) return;
  ctx.closed = true;
  log(`killing ${ctx.live.size} sandboxes left and stopping the platform`);
  await Promise.allSettled([...ctx.live].map((id) => killSandbox(ctx, id)));
  await ctx.platform.close({ destroy: true });
  usedNets.delete(ctx.net);
}

export async function api(ctx, method, p, body) {
  const res = await fetch(`${ctx.apiUrl}${p}`, {
    method,
    headers: { "X-API-Key": ctx.apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
  return text ? JSON.parse(text) : undefined;
}

/** POST /v2/sandboxes as Sandbox.create does; the sandbox's envd reached through the proxy. */
export async function createSandbox(ctx, runtime, templateID = "base") {
  const sb = await api(ctx, "POST", "/v2/sandboxes", { templateID, runtime, timeout: 900 });
  ctx.live.add(sb.sandboxID);
  const envdOpts = { baseUrl: ctx.proxyUrl, sandboxId: sb.sandboxID, accessToken: sb.envdAccessToken };
  return { id: sb.sandboxID, envdOpts, envd: createEnvdClient(envdOpts), headers: envdHeaders(envdOpts) };
}

export async function killSandbox(ctx, id) {
  await api(ctx, "DELETE", `/sandboxes/${id}`).catch(() => {});
  ctx.live.delete(id);
}

/** As the e2b client's commands.run: bash -l -c, wait for the end event. Returns stdout bytes. */
export async function runCmd(sb, cmd, { signal } = {}) {
  let bytes = 0;
  let exit;
  for await (const r of sb.envd.process.start(
    { process: { cmd: "/bin/bash", args: ["-l", "-c", cmd], envs: {} } },
    { signal },
  )) {
    const ev = r.event?.event;
    if (ev?.case === "data" && ev.value.output.case === "stdout") bytes += ev.value.output.value.length;
    if (ev?.case === "end") exit = ev.value;
  }
  if (!exit) throw new Error(`${cmd}: stream ended without an end event`);
  if (exit.exitCode !== 0) throw new Error(`${cmd}: exit ${exit.exitCode} ${exit.error ?? ""}`);
  return bytes;
}

/** envd's GET /health through the proxy answers 2xx. */
export async function envdHealthy(ctx, sb) {
  const res = await fetch(`${ctx.proxyUrl}/health`, { headers: sb.headers });
  await res.arrayBuffer();
  return res.ok;
}

/** Ready warm pool members of this runtime, over every pool. */
export function poolReady(ctx, runtime) {
  return ctx.platform.warmPool
    .stats()
    .filter((p) => p.runtime === runtime)
    .reduce((a, p) => a + p.ready, 0);
}

export async function memoryOf(dataDir, id) {
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
