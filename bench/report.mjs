// The report: DESIGN §8 targets (met / missed by how much), floors, figures with their ratio to
// the floor, sandboxes held, API throughput; Markdown for people, JSON for tools.

import { bench, fmt, MiB } from "./lib.mjs";

import { lifecycleCpuSection } from "./lifecycle-cpu.mjs";
import { filesSection } from "./scenarios/files.mjs";

/** DESIGN.md §8, as numbers. */
export const TARGETS = {
  warmCreateFirstCommandP50Ms: 30,
  coldCreateFirstCommandP50Ms: { runc: 120, runsc: 350 },
  runTrueRoundTripP50Ms: 10,
  upload64MiBDownloadMBps: 150,
  idleHeld: { count: 100, memEachMB: { runc: 64, runsc: 96 } },
  pauseResumeFrozenP50Ms: 20,
  checkpointRestoreEnvdP50Ms: 300,
  /** × the flow's floor: on the host (runc), in an idle bare runsc container (gVisor). */
  ttiSequentialVsFloor: 1.5,
  ttiStaggeredVsSequential: 1.5,
  ttiBurstVsCpuBound: { 20: 1.5, 100: 2 },
  codeInterpreterVsBase: 2,
};

/** One row per DESIGN §8 figure and runtime: the result and whether it meets its target. */
export function targetRows() {
  const { opts, results } = bench;
  const rows = [];
  const atMost = (figure, rt, target, value, unit, measuredAs) => {
    const r = { figure, runtime: rt, target: `≤ ${target} ${unit}`, value, unit, measuredAs };
    if (value === undefined) r.status = "not measured";
    else if (value <= target) r.status = "met";
    else
      r.status = `missed by ${fmt(value - target, unit === "ms" ? 0 : 1)} ${unit} (${fmt(value / target, 1)}× target)`;
    r.met = value !== undefined && value <= target;
    rows.push(r);
  };
  const atLeast = (figure, rt, target, value, unit, measuredAs) => {
    const r = { figure, runtime: rt, target: `≥ ${target} ${unit}`, value, unit, measuredAs };
    if (value === undefined) r.status = "not measured";
    else if (value >= target) r.status = "met";
    else
      r.status = `missed by ${fmt(target - value, 0)} ${unit} (${fmt((value / target) * 100, 0)}% of target)`;
    r.met = value !== undefined && value >= target;
    rows.push(r);
  };
  for (const rt of opts.runtimes) {
    const s = results.scenarios[rt] ?? {};
    const p = results.pooled[rt] ?? {};
    atMost(
      "create → first command finished, warm pool, p50",
      rt,
      TARGETS.warmCreateFirstCommandP50Ms,
      p.createFirstRun?.p50,
      "ms",
      'POST /v2/sandboxes, then run("true") via the proxy; pool refilled between creates',
    );
    atMost(
      "create → first command finished, cold, p50",
      rt,
      TARGETS.coldCreateFirstCommandP50Ms[rt],
      s.coldCreateFirstRun?.p50,
      "ms",
      "warm pool off",
    );
    atMost(
      '`commands.run("true")` round trip through the proxy, p50',
      rt,
      TARGETS.runTrueRoundTripP50Ms,
      s.runTrue?.p50,
      "ms",
      "bash -l -c true, as the e2b client runs it",
    );
    atLeast(
      "64 MiB upload through the proxy",
      rt,
      TARGETS.upload64MiBDownloadMBps,
      s.upload64MiB?.mbps,
      "MB/s",
      "p50",
    );
    atLeast(
      "64 MiB download through the proxy",
      rt,
      TARGETS.upload64MiBDownloadMBps,
      s.download64MiB?.mbps,
      "MB/s",
      "p50",
    );
    const H = results.held[rt];
    const top = H?.steps.at(-1);
    const heldRow = {
      figure: "idle sandboxes held at once",
      runtime: rt,
      target: `≥ ${TARGETS.idleHeld.count}`,
      value: H?.maxHeld,
      unit: "",
      measuredAs: `stepped ${opts.held.join(", ")}`,
    };
    if (H?.maxHeld === undefined) heldRow.status = "not measured";
    else if (H.maxHeld >= TARGETS.idleHeld.count) heldRow.status = "met";
    else if (!H.stoppedEarly && (opts.held.at(-1) ?? 0) < TARGETS.idleHeld.count)
      heldRow.status = `not tested: steps stop at ${opts.held.at(-1)} (--held)`;
    else heldRow.status = `missed: ${H.maxHeld} held (${H.stoppedEarly ?? "stopped"})`;
    heldRow.met = (H?.maxHeld ?? 0) >= TARGETS.idleHeld.count;
    rows.push(heldRow);
    atMost(
      "resident memory per idle sandbox",
      rt,
      TARGETS.idleHeld.memEachMB[rt],
      top ? top.memEach.cgroupCurrent / 1e6 : undefined,
      "MB",
      top ? `memory cgroup usage at ${top.held} held (RSS sum ${fmt(top.memEach.rssSum / 1e6, 0)} MB)` : "",
    );
    atMost(
      "pause → resume (frozen), p50",
      rt,
      TARGETS.pauseResumeFrozenP50Ms,
      s.pauseResume?.p50,
      "ms",
      "POST pause + POST connect, API answered",
    );
    if (rt === "runsc")
      atMost(
        "checkpoint → restore → envd answering, p50",
        rt,
        TARGETS.checkpointRestoreEnvdP50Ms,
        s.restoreEnvd?.p50,
        "ms",
        s.checkpoint
          ? `restore request until envd /health answers; the checkpoint before it: p50 ${fmt(s.checkpoint.p50, 0)} ms`
          : "restore request until envd /health answers",
      );
  }
  for (const rt of opts.runtimes) {
    const T = results.tti[rt];
    if (!T) continue;
    // DESIGN §8: runc against the host, gVisor against its own bare container
    const floor = rt === "runc" ? results.ttiHostFloor : T.floor;
    atMost(
      "TTI (create → probe → `node -v`, public client), sequential p50 (× its floor)",
      rt,
      TARGETS.ttiSequentialVsFloor,
      T.sequential?.p50 && floor?.p50 ? T.sequential.p50 / floor.p50 : undefined,
      "×",
      `p50 ${fmt(T.sequential?.p50, 0)} ms, ${T.sequential?.ok ?? 0} in a row, x serve defaults; floor ${fmt(floor?.p50, 0)} ms (${rt === "runc" ? "host" : "bare runsc container"})`,
    );
    const seqP50 = T.sequential?.p50;
    atMost(
      "TTI, 20 started 200 ms apart, p50 (× sequential p50)",
      rt,
      TARGETS.ttiStaggeredVsSequential,
      seqP50 && T.staggered?.p50 ? T.staggered.p50 / seqP50 : undefined,
      "×",
      T.staggered
        ? `p50 ${fmt(T.staggered.p50, 0)} ms, ${T.staggered.ok} ok, ${T.staggered.failed} failed`
        : "",
    );
    for (const n of [20, 100]) {
      const B = T[`burst${n}`];
      atMost(
        `TTI, ${n} at once, makespan (× CPU bound)`,
        rt,
        TARGETS.ttiBurstVsCpuBound[n],
        B?.boundRatio,
        "×",
        B
          ? `makespan ${fmt(B.makespanMs, 0)} ms vs bound ${fmt(B.cpuBoundMs, 0)} ms; p50 ${fmt(B.p50, 0)} / p95 ${fmt(B.p95, 0)} ms; ${B.ok} ok, ${B.failed} failed`
          : "",
      );
    }
  }
  for (const rt of opts.runtimes) {
    const S = results.shipped[rt];
    if (!S) continue;
    atMost(
      "create → first `runCode` result (code interpreter, warm pool), p50 (× base create → first command)",
      rt,
      TARGETS.codeInterpreterVsBase,
      S.codeInterpreter?.p50 && S.base?.p50 ? S.codeInterpreter.p50 / S.base.p50 : undefined,
      "×",
      S.codeInterpreter
        ? `@e2b/code-interpreter: p50 ${fmt(S.codeInterpreter.p50, 0)} ms vs base ${fmt(S.base?.p50, 0)} ms, same platform`
        : "",
    );
  }
  const f = results.floors;
  for (const r of rows) {
    const s = results.scenarios[r.runtime] ?? {};
    const p = results.pooled[r.runtime] ?? {};
    const bare = f[`bare_${r.runtime}`];
    if (r.figure.includes("warm pool"))
      r.vsFloor = `${ratio(p.createFirstRun?.p50, f.spawnTrue?.p50)} local spawn(true)`;
    else if (r.figure.includes("cold"))
      r.vsFloor = `${ratio(s.coldCreateFirstRun?.p50, bare?.p50)} bare ${r.runtime} run`;
    else if (r.figure.includes("round trip"))
      r.vsFloor = `${ratio(s.runTrue?.p50, f.fetchRoundTrip?.p50)} fetch RTT`;
    else if (r.figure.includes("upload"))
      r.vsFloor = `${pct(s.upload64MiB?.mbps, f.copy64MiB?.mbps)} of local copy`;
    else if (r.figure.includes("download"))
      r.vsFloor = `${pct(s.download64MiB?.mbps, f.copy64MiB?.mbps)} of local copy`;
    else if (r.figure.includes("pause"))
      r.vsFloor = `${ratio(s.pauseResume?.p50, 2 * (f.fetchRoundTrip?.p50 ?? 0))} two fetch RTTs`;
    else if (r.figure.includes("sequential p50 (× its floor)")) {
      const T = results.tti[r.runtime];
      r.vsFloor = `${ratio(T?.sequential?.p50, results.ttiHostFloor?.p50)} host; ${ratio(T?.sequential?.p50, T?.floor?.p50)} bare ${r.runtime} container; ${ratio(T?.sequential?.p50, T?.freshFloor?.p50)} a fresh one`;
    } else if (r.figure.includes("checkpoint"))
      r.vsFloor = `${ratio(s.restoreEnvd?.p50, f.bareRunscRestore?.p50)} bare runsc restore`;
    else r.vsFloor = "";
  }
  return rows;
}

/** One pooled TTI phase by phase (breakdown.mjs), p50 per runtime, and its largest phases. */
function breakdownSection(L, row) {
  const { opts, results } = bench;
  const rts = opts.runtimes.filter((rt) => results.tti[rt]?.breakdown?.flows);
  if (!rts.length) return;
  L.push(
    "",
    "### One pooled TTI, phase by phase (p50 over the sequential run)",
    "",
    "Client side from undici's diagnostics channels (the public client unchanged: request sent, response headers, the Connect stream's events as their chunks arrive, stream closed); server side from the platform's spans of the create. Phases are p50s of their own, so they do not add up to the total's p50 exactly; `→` is from the previous step of the same request.",
    "",
    `| phase | ${rts.map((rt) => `${rt} p50 (p95)`).join(" | ")} |`,
    `|---|${rts.map(() => "---|").join("")}`,
  );
  const B = Object.fromEntries(rts.map((rt) => [rt, results.tti[rt].breakdown]));
  for (const key of Object.keys(B[rts[0]].phases)) {
    const count = key.startsWith("other requests");
    row([
      key,
      ...rts.map((rt) => {
        const x = B[rt].phases[key];
        return !x?.n ? "–" : count ? fmt(x.max, 0) : `${fmt(x.p50, 1)} ms (${fmt(x.p95, 1)})`;
      }),
    ]);
  }
  for (const rt of rts) {
    const phases = Object.entries(B[rt].phases).filter(
      ([k, x]) =>
        x.n &&
        k !== "total" &&
        !k.startsWith("other") &&
        !k.includes("total") &&
        !k.startsWith("create: round"),
    );
    const top = phases.sort((a, b) => b[1].p50 - a[1].p50).slice(0, 3);
    const total = B[rt].phases.total?.p50;
    L.push(
      "",
      `${rt} (${B[rt].flows} flows): the largest phases are ${top.map(([k, x]) => `${k} ${fmt(x.p50, 0)} ms (${fmt((x.p50 / total) * 100, 0)}%)`).join(", ")}.`,
    );
  }
}

const ratio = (a, b) => (a && b ? `${fmt(a / b, a / b < 10 ? 2 : 0)}×` : "–");
const pct = (a, b) => (a && b ? `${fmt((a / b) * 100, 0)}%` : "–");

export function markdown(meta) {
  const { opts, results } = bench;
  const L = [];
  const row = (cells) => L.push(`| ${cells.join(" | ")} |`);
  const f = results.floors;
  L.push(`# Bench ${meta.started}`, "");
  L.push(
    `Host: ${meta.cores} cores, ${fmt(meta.memTotal / 2 ** 30)} GiB, ${meta.kernel}; Node ${process.version}; load1 at start ${fmt(meta.load1, 2)}${meta.forced ? " (**--force**: machine was not idle, numbers are noisy)" : ""}.`,
  );
  L.push(
    `Runs per latency scenario: ${opts.runs}; held steps: ${opts.held.join(", ")}; warm pool size when on: ${meta.warmPoolSize}; runtimes: ${opts.runtimes.join(", ")}; took ${fmt(meta.seconds, 0)} s (budget ${opts.budgetMin} min; excluded: the build, and ${fmt(meta.prepareSeconds ?? 0, 0)} s of one-time preparation before it: the base image and the shipped templates when not yet built, and the wait for the machine to settle).`,
    "",
  );

  L.push(
    "## Targets (DESIGN §8)",
    "",
    "| figure | runtime | target | result | status | vs floor | measured as |",
    "|---|---|---|---|---|---|---|",
  );
  for (const t of targetRows())
    row([
      t.figure,
      t.runtime,
      t.target,
      t.value === undefined ? "–" : `${fmt(t.value, t.unit === "" ? 0 : 1)} ${t.unit}`.trim(),
      t.met ? "**met**" : t.status,
      t.vsFloor,
      t.measuredAs,
    ]);

  L.push(
    "",
    "## Floors (same machine, same run)",
    "",
    "| floor | p50 | p95 | max | throughput |",
    "|---|---|---|---|---|",
  );
  const floorRow = (name, s, extra = "") =>
    s &&
    row([
      name,
      `${fmt(s.p50, 2)} ms`,
      `${fmt(s.p95, 2)} ms`,
      `${fmt(s.max, 2)} ms`,
      s.mbps ? `${fmt(s.mbps, 0)} MB/s` : extra,
    ]);
  floorRow('local `spawn("true")`', f.spawnTrue);
  floorRow('local `spawn("bash -l -c true")`', f.spawnBashTrue);
  for (const rt of opts.runtimes) floorRow(`bare \`${rt} run\` of \`true\` (same rootfs)`, f[`bare_${rt}`]);
  floorRow("bare `runsc checkpoint` of a sleeping container", f.bareRunscCheckpoint);
  floorRow("bare `runsc restore` of it (`-detach`: running again)", f.bareRunscRestore);
  floorRow("loopback HTTP round trip (node:http keep-alive)", f.httpRoundTrip);
  floorRow("loopback HTTP round trip (fetch)", f.fetchRoundTrip);
  if (f.http32Clients)
    floorRow(
      "loopback HTTP, 32 fetch clients (per request)",
      f.http32Clients,
      `${fmt(f.http32Clients.perSecond, 0)} req/s`,
    );
  floorRow("local pipe of 100 MB (`head -c`)", f.pipe100MB);
  floorRow("local copy of 64 MiB", f.copy64MiB);
  floorRow("local `cp -a` of 100 MB in 10 files", f.copyTree100MB);
  floorRow("local write of 10,000 small files (100 at a time)", f.write10kFiles);
  floorRow("local readdir of 10,000 files", f.list10kFiles);

  if (Object.keys(results.tti).length) {
    L.push(
      "",
      "## Time to interactive (public e2b client)",
      "",
      "`Sandbox.create()` → an identity probe (about ten small processes) → `node -v`, both read to the end, through the unchanged `e2b` client against a platform with `x serve`'s defaults; the kill is not timed. CPU bound of a burst of n = n × (CPU seconds one sequential TTI costs: the host's busy time over the sequential run, the pool's refills included, ÷ its TTIs) ÷ cores.",
      "",
      "| shape | runtime | ok / failed | p50 | p95 | p99 | max | makespan | CPU bound |",
      "|---|---|---|---|---|---|---|---|---|",
    );
    const H = results.ttiHostFloor;
    const floorRow = (name, rt, F) =>
      F &&
      row([
        name,
        rt,
        `${F.n} / 0`,
        `${fmt(F.p50, 0)} ms`,
        `${fmt(F.p95, 0)} ms`,
        `${fmt(F.p99, 0)} ms`,
        `${fmt(F.max, 0)} ms`,
        "–",
        "–",
      ]);
    floorRow(
      "floor: the probe and `node -v` on the host itself (no sandbox, platform or network)",
      "host",
      H,
    );
    for (const rt of opts.runtimes) {
      const F = results.tti[rt]?.floor;
      floorRow(
        `floor: the probe and \`node -v\` by bash in an idle bare ${rt} container (timed inside; with \`${rt} exec\` p50 ${fmt(F?.withExec?.p50, 0)} ms)`,
        rt,
        F,
      );
      floorRow(
        `floor: the same, once in each of ${results.tti[rt]?.freshFloor?.n} fresh bare ${rt} containers left idle ${(results.tti[rt]?.freshFloor?.idleMs ?? 0) / 1000} s first, as a pool member is (no cache filled yet)`,
        rt,
        results.tti[rt]?.freshFloor,
      );
    }
    for (const rt of opts.runtimes) {
      const T = results.tti[rt];
      if (!T) continue;
      const cell = (x) => (x === undefined ? "–" : `${fmt(x, 0)} ms`);
      const line = (name, x, extra = ["–", "–"]) =>
        x &&
        row([
          name,
          rt,
          `${x.ok} / ${x.failed ?? 0}`,
          cell(x.p50),
          cell(x.p95),
          cell(x.p99),
          cell(x.max),
          ...extra,
        ]);
      line(
        `sequential (${T.sequential?.ok ?? 0}); ${fmt(T.sequential?.cpuSecondsPerTti, 3)} CPU s each; p50 ${ratio(T.sequential?.p50, H?.p50)} host floor, ${ratio(T.sequential?.p50, T.floor?.p50)} ${rt} container floor, ${ratio(T.sequential?.p50, T.freshFloor?.p50)} fresh container floor`,
        T.sequential,
      );
      line(
        `spaced, one at a time ${T.spaced?.pauseMs} ms apart; p50 ${ratio(T.spaced?.p50, T.floor?.p50)} ${rt} container floor, ${ratio(T.spaced?.p50, T.freshFloor?.p50)} fresh container floor`,
        T.spaced,
      );
      line("staggered, 20 every 200 ms", T.staggered, [cell(T.staggered?.makespanMs), "–"]);
      for (const n of [20, 100])
        line(`burst of ${n}`, T[`burst${n}`], [
          cell(T[`burst${n}`]?.makespanMs),
          cell(T[`burst${n}`]?.cpuBoundMs),
        ]);
      for (const key of ["staggered", "burst20", "burst100"])
        for (const e of T[key]?.errors ?? []) L.push("", `- ${rt} ${key} error: ${e}`);
    }
  }

  breakdownSection(L, row);
  lifecycleCpuSection(L, row, results, opts.runtimes);

  L.push(
    "",
    "## What users feel, per runtime",
    "",
    "All through the API and the proxy on loopback, as the e2b client does. *pool* = warm pool on or off.",
    "",
    "| scenario | runtime | pool | p50 | p95 | max | vs floor (p50) |",
    "|---|---|---|---|---|---|---|",
  );
  const ms = (x) => (x?.n ? [`${fmt(x.p50)} ms`, `${fmt(x.p95)} ms`, `${fmt(x.max)} ms`] : ["–", "–", "–"]);
  const tp = (x, bytes) =>
    x?.n
      ? [
          `${fmt(x.mbps ?? bytes / 1e6 / (x.p50 / 1000), 0)} MB/s (${fmt(x.p50, 0)} ms)`,
          `${fmt(x.p95, 0)} ms`,
          `${fmt(x.max, 0)} ms`,
        ]
      : ["–", "–", "–"];
  for (const rt of opts.runtimes) {
    const s = results.scenarios[rt] ?? {};
    const p = results.pooled[rt] ?? {};
    const bare = f[`bare_${rt}`];
    row([
      "create → first `true` finished",
      rt,
      "off",
      ...ms(s.coldCreateFirstRun),
      `${ratio(s.coldCreateFirstRun?.p50, bare?.p50)} bare ${rt} run`,
    ]);
    row(["↳ of which `POST /v2/sandboxes`", rt, "off", ...ms(s.createApiOnly), ""]);
    row([
      "create → first `true` finished",
      rt,
      `on (${p.poolSize ?? "–"})`,
      ...ms(p.createFirstRun),
      `${ratio(p.createFirstRun?.p50, f.spawnTrue?.p50)} spawn(true); ${p.creates ? `${p.hits}/${p.creates} creates took a member` : ""}`,
    ]);
    row([
      "↳ of which `POST /v2/sandboxes`",
      rt,
      "on",
      ...ms(p.createApiOnly),
      `${ratio(p.createApiOnly?.p50, f.fetchRoundTrip?.p50)} fetch RTT`,
    ]);
    row([
      '`run("true")` round trip',
      rt,
      "–",
      ...ms(s.runTrue),
      `${ratio(s.runTrue?.p50, f.spawnTrue?.p50)} spawn(true); ${ratio(s.runTrue?.p50, f.spawnBashTrue?.p50)} local bash -l; ${ratio(s.runTrue?.p50, f.fetchRoundTrip?.p50)} fetch RTT`,
    ]);
    row([
      "a terminal (`bash -i -l` in a PTY): opened → first output",
      rt,
      "–",
      ...ms(s.ptyFirstOutput),
      `${ratio(s.ptyFirstOutput?.p50, s.runTrue?.p50)} run("true") round trip`,
    ]);
    row(["↳ then `exit` typed → end event", rt, "–", ...ms(s.ptyWhole), "whole: opened → ended"]);
    for (const [name, what] of [
      ["spinner", "a neighbour spinning every core"],
      ["forkBomb", "a neighbour's fork bomb"],
      ["memoryHog", "a neighbour's memory hog"],
    ]) {
      const beside = s[`runTrueBeside_${name}`];
      if (!beside) continue;
      row([
        `↳ beside ${what}`,
        rt,
        "–",
        ...ms(beside),
        `p95 ${ratio(beside.p95, s[`runTrueIdleFor_${name}`]?.p95)} of idle (p50/p95 ${fmt(s[`runTrueIdleFor_${name}`]?.p50, 1)}/${fmt(s[`runTrueIdleFor_${name}`]?.p95, 1)} ms just before); API GET p50/p95 ${fmt(s[`apiBeside_${name}`]?.p50, 1)}/${fmt(s[`apiBeside_${name}`]?.p95, 1)} ms`,
      ]);
    }
    row([
      "stream 100 MB of stdout",
      rt,
      "–",
      ...tp(s.stream100MB, 100e6),
      `${pct(s.stream100MB?.mbps, f.pipe100MB?.mbps)} of local pipe`,
    ]);
    row([
      "upload 64 MiB (envd `/files`)",
      rt,
      "–",
      ...tp(s.upload64MiB),
      `${pct(s.upload64MiB?.mbps, f.copy64MiB?.mbps)} of local copy`,
    ]);
    row([
      "download 64 MiB (envd `/files`)",
      rt,
      "–",
      ...tp(s.download64MiB),
      `${pct(s.download64MiB?.mbps, f.copy64MiB?.mbps)} of local copy`,
    ]);
    row([
      `write 10,000 small files (multipart \`/files\`, ${s.write10kFiles?.batch ?? 1000} per request)`,
      rt,
      "–",
      ...ms(s.write10kFiles),
      `${ratio(s.write10kFiles?.p50, f.write10kFiles?.p50)} local write`,
    ]);
    row([
      "list them (`ListDir`, depth 1)",
      rt,
      "–",
      ...ms(s.list10kFiles),
      `${ratio(s.list10kFiles?.p50, f.list10kFiles?.p50)} local readdir`,
    ]);
    row(["pause (frozen)", rt, "–", ...ms(s.pause), ""]);
    row(["resume (frozen) → API answered", rt, "–", ...ms(s.resume), ""]);
    row([
      "pause + resume (frozen)",
      rt,
      "–",
      ...ms(s.pauseResume),
      `${ratio(s.pauseResume?.p50, 2 * (f.fetchRoundTrip?.p50 ?? 0))} two fetch RTTs`,
    ]);
    row(["resume (frozen) → `true` finished", rt, "–", ...ms(s.resumeThenRunTrue), ""]);
    if (rt === "runsc") {
      row([
        "checkpoint (frozen → checkpointed)",
        rt,
        "–",
        ...ms(s.checkpoint),
        `${ratio(s.checkpoint?.p50, f.bareRunscCheckpoint?.p50)} bare runsc checkpoint`,
      ]);
      row(["restore → API answered", rt, "–", ...ms(s.restore), ""]);
      row([
        "restore → envd answering (`/health`)",
        rt,
        "–",
        ...ms(s.restoreEnvd),
        `${ratio(s.restoreEnvd?.p50, f.bareRunscRestore?.p50)} bare runsc restore`,
      ]);
      row(["restore → `true` finished", rt, "–", ...ms(s.restoreRunTrue), ""]);
      row([
        "checkpoint + restore → envd answering",
        rt,
        "–",
        ...ms(s.checkpointRestoreEnvd),
        `${ratio(s.checkpointRestoreEnvd?.p50, (f.bareRunscCheckpoint?.p50 ?? 0) + (f.bareRunscRestore?.p50 ?? 0))} bare checkpoint + restore`,
      ]);
    } else
      row([
        "checkpoint → restore",
        rt,
        "–",
        "n/a",
        "",
        "",
        "no checkpoint under runc here (CRIU, DESIGN §3)",
      ]);
    row([
      `snapshot of a sandbox with 100 MB of new files${s.snapshotKind ? ` (kind: ${s.snapshotKind})` : ""}`,
      rt,
      "–",
      ...tp(s.snapshot100MB),
      `${ratio(s.snapshot100MB?.p50, f.copyTree100MB?.p50)} local cp -a of 100 MB`,
    ]);
    row([
      "create from that snapshot → first `true` finished",
      rt,
      "off",
      ...ms(s.createFromSnapshotFirstRun),
      `${ratio(s.createFromSnapshotFirstRun?.p50, bare?.p50)} bare ${rt} run`,
    ]);
    row(["↳ of which `POST /v2/sandboxes`", rt, "off", ...ms(s.createFromSnapshotApiOnly), ""]);
  }

  L.push("", "## Idle sandboxes held at once (warm pool off)", "");
  L.push(
    "| runtime | held | create → first run p50 / p95 (this step) | vs bare run | cgroup mem each | anon each | RSS sum each | host used | target |",
    "|---|---|---|---|---|---|---|---|---|",
  );
  for (const rt of opts.runtimes) {
    const H = results.held[rt];
    if (!H) continue;
    for (const st of H.steps)
      row([
        rt,
        st.held,
        `${fmt(st.create.p50)} / ${fmt(st.create.p95)} ms`,
        ratio(st.create.p50, f[`bare_${rt}`]?.p50),
        `${fmt(st.memEach.cgroupCurrent / MiB)} MiB`,
        `${fmt(st.memEach.anon / MiB)} MiB`,
        `${fmt(st.memEach.rssSum / MiB)} MiB`,
        `${fmt(st.hostUsedBytes / 2 ** 30, 2)} GiB`,
        `≥ ${TARGETS.idleHeld.count}; ≤ ${TARGETS.idleHeld.memEachMB[rt]} MB each`,
      ]);
  }
  for (const rt of opts.runtimes) {
    const H = results.held[rt];
    if (H?.stoppedEarly) L.push("", `${rt}: ${H.stoppedEarly}.`);
    if (H?.memErrors) L.push("", `${rt}: memory unreadable for ${H.memErrors} samples (${H.memError}).`);
  }
  if (meta.plot) L.push("", `Plot: \`${meta.plot}\` (create → first run, ms, vs sandboxes already held).`);
  if (results.api.list) {
    L.push(
      "",
      `## API under 32 concurrent clients (${results.api.held} sandboxes held)`,
      "",
      "| call | requests | req/s | p50 | p95 | max | errors | vs loopback floor (req/s) |",
      "|---|---|---|---|---|---|---|---|",
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
        pct(v.perSecond, f.http32Clients?.perSecond),
      ]);
  }
  const C = results.cluster;
  if (C && Object.keys(C).length) {
    L.push(
      "",
      "## Beyond one machine: the cluster's front (public e2b client)",
      "",
      "One node (runc, warm pool) with an `x api` and an `x proxy` on a PostgreSQL catalog, all in this process. The same client calls go straight to the node (its own API and proxy, as `x serve` serves them) and through the api and the proxy, alternating: the difference is the hop and the catalog lookups.",
      "",
      "| call | straight to the node, p50 / p95 | through api + proxy, p50 / p95 | added at p50 |",
      "|---|---|---|---|",
    );
    const pair = (name, x) =>
      x &&
      row([
        name,
        `${fmt(x.direct.p50)} / ${fmt(x.direct.p95)} ms`,
        `${fmt(x.cluster.p50)} / ${fmt(x.cluster.p95)} ms`,
        `${fmt(x.cluster.p50 - x.direct.p50)} ms`,
      ]);
    pair(`create → first run("true"), pooled (${C.create?.direct.n ?? 0} each)`, C.create);
    pair(`run("true") (${C.run?.direct.n ?? 0} each)`, C.run);
    pair(`getInfo (${C.getInfo?.direct.n ?? 0} each)`, C.getInfo);
  }

  const shipped = opts.runtimes.filter((rt) => results.shipped[rt]);
  if (shipped.length) {
    L.push(
      "",
      "## E2B's packages on the shipped templates (warm pool)",
      "",
      "Through the unchanged `@e2b/code-interpreter` and `@e2b/desktop`, on one platform per runtime, each create after the pool refilled. The desktop's create includes the SDK's own start of Xvfb and XFCE (commands it runs and polls through envd).",
      "",
      "| figure | runtime | p50 | p95 | n | × base |",
      "|---|---|---|---|---|---|",
    );
    for (const rt of shipped) {
      const S = results.shipped[rt];
      for (const [name, v] of [
        ["base: create → first `run(true)`", S.base],
        ["code-interpreter-v1: create → first `runCode` result", S.codeInterpreter],
        ["desktop: create (SDK start-up) → first screenshot", S.desktop],
      ])
        if (v?.n)
          row([name, rt, `${fmt(v.p50, 0)} ms`, `${fmt(v.p95, 0)} ms`, v.n, ratio(v.p50, S.base?.p50)]);
    }
  }

  if (results.files) L.push("", filesSection(results.files));
  L.push("", "## Notes", "");
  for (const n of results.notes) L.push(`- ${n}`);
  for (const e of results.errors) L.push(`- **${e.scenario}**: ${e.error}`);
  return `${L.join("\n")}\n`;
}
