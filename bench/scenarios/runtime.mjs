// Per runtime, on the platform without a warm pool: what one sandbox feels like to a user.
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { smallFile } from "../floors.mjs";
import { bench, log, mbps, more, now, scenario, stats, timeMany } from "../lib.mjs";
import { api, createSandbox, envdHealthy, killSandbox, runCmd } from "../platform.mjs";

const SMALL_FILES = 10_000;
const SMALL_BATCH = 1_000;

export async function runtimeScenarios(ctx, rt) {
  const { opts } = bench;
  const R = {};
  bench.results.scenarios[rt] = R;

  await scenario(`${rt}: create → first run(true), cold`, async () => {
    const samples = [];
    const createOnly = [];
    const t0 = now();
    for (let i = 0; i < opts.runs && more(i, t0, 3, 90_000); i++) {
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
    R.runTrue = stats(await timeMany(opts.runs * 3, () => runCmd(sb, "true"), { warmup: 3, capMs: 30_000 }));
  });
  if (!sb) return;

  await scenario(`${rt}: a terminal opened, its shell exited`, async () => {
    const first = [];
    const whole = [];
    for (let i = 0; i < opts.runs * 2; i++) {
      const t = now();
      const r = await openTerminalAndExit(sb);
      first.push(r.firstOutputMs);
      whole.push(now() - t);
    }
    R.ptyFirstOutput = stats(first);
    R.ptyWhole = stats(whole);
  });

  // Neighbours: the same round trip, and the API's, while another sandbox misbehaves (issue 18:
  // p95 within 2x of idle). Each misbehaviour runs in a sandbox of its own, started in the
  // background, and the sandbox is killed after.
  const neighbours = [
    ["spinner", "for i in $(seq $(nproc)); do (while :; do :; done) & done; wait"],
    ["forkBomb", ":(){ :|:& };:; sleep 600"],
    [
      "memoryHog",
      `node -e "const a = []; for (;;) { a.push(Buffer.alloc(16 << 20, 1)); if (a.length > 48) a.length = 0; }"`,
    ],
  ];
  for (const [name, cmd] of neighbours) {
    await scenario(`${rt}: run("true") beside a ${name}`, async () => {
      const noisy = await createSandbox(ctx, rt);
      const stop = new AbortController();
      const samples = Math.max(60, opts.runs * 12);
      let running;
      try {
        // idle first, the same way, then with the neighbour busy for a while (the platform
        // looks at CPU use over seconds before it reweighs a busy sandbox)
        R[`runTrueIdleFor_${name}`] = stats(
          await timeMany(samples, () => runCmd(sb, "true"), { capMs: 15_000 }),
        );
        running = runCmd(noisy, `${cmd} >/dev/null 2>&1`, { signal: stop.signal }).catch(() => undefined);
        await sleep(5_000);
        const runSamples = [];
        const apiSamples = [];
        const t0 = now();
        for (let i = 0; i < samples && more(i, t0, 3, 15_000); i++) {
          let t = now();
          await runCmd(sb, "true");
          runSamples.push(now() - t);
          t = now();
          await api(ctx, "GET", `/sandboxes/${sb.id}`);
          apiSamples.push(now() - t);
        }
        R[`runTrueBeside_${name}`] = stats(runSamples);
        R[`apiBeside_${name}`] = stats(apiSamples);
      } finally {
        stop.abort();
        await killSandbox(ctx, noisy.id);
        await running;
      }
    });
  }

  await scenario(`${rt}: stream 100 MB stdout`, async () => {
    const samples = [];
    const t0 = now();
    for (let i = 0; i < 3 && more(i, t0, 2, 40_000); i++) {
      const t = now();
      const n = await runCmd(sb, "head -c 100000000 /dev/zero");
      if (n !== 100_000_000) throw new Error(`got ${n} bytes of stdout, expected 100000000`);
      samples.push(now() - t);
    }
    const s = stats(samples);
    R.stream100MB = { ...s, mbps: mbps(100e6, s.p50) };
  });

  await scenario(`${rt}: 64 MiB upload then download`, async () => {
    const size = 64 * 1024 * 1024;
    const blob = randomBytes(size);
    const url = `${ctx.proxyUrl}/files?path=${encodeURIComponent("/tmp/bench.bin")}&username=user`;
    const up = [];
    const down = [];
    for (let i = 0; i < 3; i++) {
      let t = now();
      const res = await fetch(url, {
        method: "POST",
        headers: { ...sb.headers, "Content-Type": "application/octet-stream" },
        body: blob,
      });
      const text = await res.text();
      if (!res.ok) throw new Error(`upload: ${res.status} ${text.slice(0, 200)}`);
      up.push(now() - t);
      t = now();
      const got = await fetch(url, { headers: sb.headers });
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
    await runCmd(sb, "rm -f /tmp/bench.bin");
  });

  await scenario(`${rt}: ${SMALL_FILES} small files written and listed`, async () => {
    // files.write([...]) of the SDK: multipart POST /files, one part per file, its filename the
    // path; here in batches of SMALL_BATCH parts. Then files.list(dir): Connect ListDir, depth 1.
    const write = [];
    const list = [];
    const t0 = now();
    for (let r = 0; r < 3 && more(r, t0, 1, 45_000); r++) {
      const dir = `/home/user/many-${r}`;
      let t = now();
      for (let i = 0; i < SMALL_FILES; i += SMALL_BATCH) {
        const form = new FormData();
        for (let j = i; j < Math.min(SMALL_FILES, i + SMALL_BATCH); j++)
          form.append("file", new Blob([smallFile(j)]), `${dir}/f${j}.txt`);
        const res = await fetch(`${ctx.proxyUrl}/files?username=user`, {
          method: "POST",
          headers: sb.headers,
          body: form,
        });
        const text = await res.text();
        if (!res.ok) throw new Error(`multipart upload: ${res.status} ${text.slice(0, 200)}`);
      }
      write.push(now() - t);
      t = now();
      const listed = await sb.envd.filesystem.listDir({ path: dir, depth: 1 });
      list.push(now() - t);
      if (listed.entries.length !== SMALL_FILES)
        throw new Error(`listed ${listed.entries.length} entries in ${dir}, expected ${SMALL_FILES}`);
    }
    R.write10kFiles = { ...stats(write), batch: SMALL_BATCH };
    R.list10kFiles = stats(list);
    await runCmd(sb, "rm -rf /home/user/many-*");
  });

  await scenario(`${rt}: pause → resume (frozen)`, async () => {
    const pause = [];
    const resume = [];
    const both = [];
    const resumeToRun = [];
    const t0 = now();
    for (let i = 0; i < Math.min(opts.runs, 10) && more(i, t0, 3, 30_000); i++) {
      let t = now();
      await api(ctx, "POST", `/sandboxes/${sb.id}/pause`, {});
      pause.push(now() - t);
      t = now();
      await api(ctx, "POST", `/sandboxes/${sb.id}/connect`, { timeout: 900 });
      resume.push(now() - t);
      both.push(pause.at(-1) + resume.at(-1));
      await runCmd(sb, "true");
      resumeToRun.push(now() - t);
    }
    R.pause = stats(pause);
    R.resume = stats(resume);
    R.pauseResume = stats(both);
    R.resumeThenRunTrue = stats(resumeToRun);
  });

  if (rt === "runsc") {
    await scenario(`${rt}: checkpoint → restore → envd answering`, async () => {
      const ckpt = [];
      const restore = [];
      const restoreHealthy = [];
      const restoreRun = [];
      const total = [];
      const fellBack = [];
      let attempts = 0;
      const t0 = now();
      for (; attempts < Math.min(opts.runs, 8) && more(attempts, t0, 3, 45_000); attempts++) {
        await api(ctx, "POST", `/sandboxes/${sb.id}/pause`, {});
        let t = now();
        const kind = await ctx.platform.orchestrator.deepPause(sb.id);
        const ckptMs = now() - t;
        t = now();
        await api(ctx, "POST", `/sandboxes/${sb.id}/connect`, { timeout: 900 });
        const restoreMs = now() - t;
        for (let k = 0; !(await envdHealthy(ctx, sb)); k++) {
          if (k > 2000) throw new Error("envd did not answer within 10 s of the restore");
          await new Promise((r) => setTimeout(r, 5));
        }
        const healthyMs = now() - t;
        await runCmd(sb, "true");
        // a checkpoint that failed fell back to a stop: resumed by a boot, not a restore
        if (kind !== "checkpointed") {
          fellBack.push({ attempt: attempts, kind });
          continue;
        }
        ckpt.push(ckptMs);
        restore.push(restoreMs);
        restoreHealthy.push(healthyMs);
        total.push(ckptMs + healthyMs);
        restoreRun.push(now() - t);
      }
      R.checkpointAttempts = attempts;
      R.checkpointFellBack = fellBack;
      if (fellBack.length)
        bench.results.notes.push(
          `${rt}: ${fellBack.length} of ${attempts} checkpoints failed and the platform stopped the sandbox instead (attempts ${fellBack.map((f) => f.attempt).join(", ")}; the reason is in the platform log, "checkpoint failed"); only the checkpointed ones are in the figures.`,
        );
      if (ckpt.length === 0) throw new Error(`no checkpoint succeeded in ${attempts} attempts`);
      R.checkpoint = stats(ckpt);
      R.restore = stats(restore);
      R.restoreEnvd = stats(restoreHealthy);
      R.restoreRunTrue = stats(restoreRun);
      R.checkpointRestoreEnvd = stats(total);
    });
  }

  await scenario(`${rt}: snapshot with 100 MB of new files, create from it`, async () => {
    const snap = [];
    const fromSnap = [];
    const fromSnapApi = [];
    await api(ctx, "POST", `/sandboxes/${sb.id}/connect`, { timeout: 900 });
    await runCmd(
      sb,
      "mkdir -p ~/snapdata && for i in 0 1 2 3 4 5 6 7 8 9; do head -c 10000000 /dev/urandom > ~/snapdata/f$i; done",
    );
    let snapshotID;
    const kinds = new Set();
    const t0 = now();
    for (let i = 0; i < 3 && more(i, t0, 1, 30_000); i++) {
      const t = now();
      const taken = await api(ctx, "POST", `/sandboxes/${sb.id}/snapshots`, {});
      snap.push(now() - t);
      snapshotID = taken.snapshotID;
      kinds.add(taken.kind ?? "unknown");
    }
    R.snapshotTemplate = snapshotID;
    // "memory" (gVisor: sandboxes from it continue the processes) or "files" (they boot afresh)
    R.snapshotKind = [...kinds].join(", ");
    const t1 = now();
    for (let i = 0; i < Math.min(opts.runs, 10) && more(i, t1, 3, 60_000); i++) {
      const t = now();
      const child = await createSandbox(ctx, rt, snapshotID);
      const tc = now();
      await runCmd(child, "true");
      fromSnap.push(now() - t);
      fromSnapApi.push(tc - t);
      if (i === 0) await runCmd(child, 'test "$(du -sb ~/snapdata | cut -f1)" -ge 100000000');
      await killSandbox(ctx, child.id);
    }
    R.snapshot100MB = { ...stats(snap), mbps: mbps(100e6, stats(snap).p50) };
    R.createFromSnapshotFirstRun = stats(fromSnap);
    R.createFromSnapshotApiOnly = stats(fromSnapApi);
  });

  log(`  ${rt}: done with the single-sandbox scenarios`);
  await killSandbox(ctx, sb.id);
}

/**
 * A terminal as the e2b client opens one (`bash -i -l` in an 80x24 PTY): until the shell's
 * first output (its prompt), then `exit` typed, until the end event.
 */
async function openTerminalAndExit(sb) {
  const t = now();
  let firstOutputMs;
  let pid;
  for await (const r of sb.envd.process.start({
    process: { cmd: "/bin/bash", args: ["-i", "-l"], envs: { TERM: "xterm-256color" } },
    pty: { size: { cols: 80, rows: 24 } },
  })) {
    const ev = r.event?.event;
    if (ev?.case === "start") pid = ev.value.pid;
    if (ev?.case === "data" && firstOutputMs === undefined) {
      firstOutputMs = now() - t;
      await sb.envd.process.sendInput({
        process: { selector: { case: "pid", value: pid } },
        input: { input: { case: "pty", value: new TextEncoder().encode("exit\n") } },
      });
    }
    if (ev?.case === "end") return { firstOutputMs };
  }
  throw new Error("the terminal's stream ended without an end event");
}
