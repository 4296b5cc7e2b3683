// The physical floor on this machine, measured in the same run as the platform's figures.
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { copyFile, mkdir, readdir, writeFile } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import {
  bareBundle,
  bench,
  hammer,
  mbps,
  more,
  pipeBytes,
  run,
  scenario,
  sh,
  stats,
  timeMany,
} from "./lib.mjs";

let bareSeq = 0;

/** Every floor into `bench.results.floors`. `baseRootfs` is the base template's root filesystem. */
export async function floors(scratch, baseRootfs) {
  const { opts } = bench;
  const F = bench.results.floors;
  await scenario("floor: spawn(true)", async () => {
    F.spawnTrue = stats(await timeMany(opts.runs * 2, () => run("true", []), { warmup: 3 }));
  });
  await scenario("floor: spawn(bash -l -c true)", async () => {
    F.spawnBashTrue = stats(
      await timeMany(opts.runs, () => run("/bin/bash", ["-l", "-c", "true"]), { warmup: 2 }),
    );
  });
  await scenario("floor: local pipe 100 MB", async () => {
    const s = stats(await timeMany(3, () => pipeBytes("head", ["-c", "100000000", "/dev/zero"])));
    F.pipe100MB = { ...s, mbps: mbps(100e6, s.p50) };
  });
  await scenario("floor: local copy 64 MiB", async () => {
    const src = path.join(scratch, "blob");
    await writeFile(src, randomBytes(64 * 1024 * 1024));
    const s = stats(await timeMany(5, (i) => copyFile(src, path.join(scratch, `blob-${i}`))));
    F.copy64MiB = { ...s, mbps: mbps(64 * 1024 * 1024, s.p50) };
    for (let i = 0; i < 5; i++) rmSync(path.join(scratch, `blob-${i}`), { force: true });
    rmSync(src, { force: true });
  });
  await scenario("floor: local cp -a of 100 MB of new files", async () => {
    const src = path.join(scratch, "tree100");
    mkdirSync(src, { recursive: true });
    for (let i = 0; i < 10; i++) writeFileSync(path.join(src, `f${i}`), randomBytes(10_000_000));
    const s = stats(
      await timeMany(3, async (i) => {
        const dst = path.join(scratch, `tree100-copy-${i}`);
        rmSync(dst, { recursive: true, force: true });
        await run("cp", ["-a", src, dst]);
      }),
    );
    F.copyTree100MB = { ...s, mbps: mbps(100e6, s.p50) };
    rmSync(src, { recursive: true, force: true });
    for (let i = -1; i < 3; i++)
      rmSync(path.join(scratch, `tree100-copy-${i}`), { recursive: true, force: true });
  });
  await scenario("floor: local write + list of 10,000 small files", async () => {
    const write = [];
    const list = [];
    const t0 = performance.now();
    for (let r = 0; r < 3 && more(r, t0, 1, 30_000); r++) {
      const dir = path.join(scratch, `many-${r}`);
      await mkdir(dir, { recursive: true });
      let t = performance.now();
      // 100 files at a time, as a server writing parts of a multipart body would
      for (let i = 0; i < 10_000; i += 100)
        await Promise.all(
          Array.from({ length: 100 }, (_, j) => writeFile(path.join(dir, `f${i + j}.txt`), smallFile(i + j))),
        );
      write.push(performance.now() - t);
      t = performance.now();
      const n = (await readdir(dir, { withFileTypes: true })).length;
      list.push(performance.now() - t);
      if (n !== 10_000) throw new Error(`listed ${n} files, expected 10000`);
      rmSync(dir, { recursive: true, force: true });
    }
    F.write10kFiles = stats(write);
    F.list10kFiles = stats(list);
  });
  await scenario("floor: loopback HTTP", async () => {
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
      F.httpRoundTrip = stats(await timeMany(opts.runs * 10, get, { warmup: 20 }));
      // fetch (undici) is what the clients use: its floor too
      const url = `http://127.0.0.1:${port}/`;
      F.fetchRoundTrip = stats(
        await timeMany(opts.runs * 10, async () => (await fetch(url)).text(), { warmup: 20 }),
      );
      // what a Node HTTP server does at most with 32 clients on this machine (the API's floor)
      F.http32Clients = await hammer(opts.apiRequests, 32, async () => {
        const res = await fetch(url);
        await res.arrayBuffer();
        return res.ok;
      });
    } finally {
      agent.destroy();
      server.closeAllConnections?.();
      server.close();
    }
  });
  for (const rt of opts.runtimes) {
    await scenario(`floor: bare ${rt} run true`, async () => {
      if (!sh("sh", ["-c", `command -v ${rt} || true`]).trim()) throw new Error(`${rt} not installed`);
      const bundle = path.join(scratch, `bundle-${rt}`);
      const stateRoot = path.join(scratch, `state-${rt}`);
      const global = bareBundle(rt, { bundle, stateRoot, rootfs: baseRootfs, args: ["/bin/true"] });
      const samples = await timeMany(
        opts.runs,
        () => run(rt, [...global, "run", "--bundle", bundle, `xbench-${process.pid}-${rt}-${++bareSeq}`]),
        { warmup: 1 },
      );
      F[`bare_${rt}`] = stats(samples);
    });
  }
  if (opts.runtimes.includes("runsc"))
    await scenario("floor: bare runsc checkpoint + restore of a sleeping container", async () => {
      const bundle = path.join(scratch, "bundle-runsc-sleep");
      const stateRoot = path.join(scratch, "state-runsc");
      const image = path.join(scratch, "ckpt-image");
      const g = bareBundle("runsc", { bundle, stateRoot, rootfs: baseRootfs, args: ["/bin/sleep", "1000"] });
      const id = `xbench-${process.pid}-ckpt`;
      const ckpt = [];
      const restore = [];
      await run("runsc", [...g, "run", "-detach", "--bundle", bundle, id]);
      try {
        const t0 = performance.now();
        for (let i = 0; i < Math.min(opts.runs, 5) && more(i, t0, 3, 20_000); i++) {
          rmSync(image, { recursive: true, force: true });
          let t = performance.now();
          await run("runsc", [...g, "checkpoint", "--image-path", image, id]);
          ckpt.push(performance.now() - t);
          // --force: runsc 2024 still says `running` for about a second after its checkpoint
          await run("runsc", [...g, "delete", "--force", id]);
          t = performance.now();
          await run("runsc", [...g, "restore", "--image-path", image, "--bundle", bundle, "-detach", id]);
          restore.push(performance.now() - t);
        }
      } finally {
        spawnSync("runsc", [...g, "delete", "--force", id]);
        rmSync(image, { recursive: true, force: true });
      }
      F.bareRunscCheckpoint = stats(ckpt);
      F.bareRunscRestore = stats(restore);
    });
}

/** The content of small file `i` (the same bytes locally and in the sandbox). */
export function smallFile(i) {
  return `file ${i}: ${"x".repeat(64)}\n`;
}
