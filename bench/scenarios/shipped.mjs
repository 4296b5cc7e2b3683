// The templates that ship with the platform, through E2B's own packages, warm pool on: create →
// first runCode result (@e2b/code-interpreter) and create → first screenshot (@e2b/desktop, whose
// create includes the SDK's start of Xvfb and XFCE), beside base's create → first command on the
// same platform. One platform per runtime (the packages cannot ask for one), on a data directory
// kept between runs so the templates are built once per machine.
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { bench, log, more, note, now, PKG, scenario, sh, stats } from "../lib.mjs";
import { closePlatform, createSandbox, killSandbox, openPlatform, runCmd } from "../platform.mjs";

const require = createRequire(PKG("platform/package.json"));
const X_BIN = PKG("cli/bin/x.mjs");
/** Kept between runs: its store holds the built templates. */
export const SHIPPED_DATA_DIR = process.env.X_BENCH_SHIPPED_DIR ?? "/var/tmp/x-bench-shipped";

/** The shipped data directory's images: the bench's cached base image (prepare.mjs), hard-linked, on first use. */
function linkImages(cachedImages) {
  if (!existsSync(path.join(SHIPPED_DATA_DIR, "images"))) {
    mkdirSync(SHIPPED_DATA_DIR, { recursive: true });
    sh("cp", ["-al", cachedImages, path.join(SHIPPED_DATA_DIR, "images")]);
  }
}

/**
 * Installs code-interpreter-v1 and desktop into the shipped data directory (run.mjs, before the
 * budget starts): built the first time on a machine (minutes), found installed after that.
 */
export async function installShippedTemplates(rt, cachedImages) {
  linkImages(cachedImages);
  const ctx = await openPlatform(SHIPPED_DATA_DIR, { warmPoolSize: 0, defaultRuntime: rt, reuse: true });
  try {
    const t = now();
    // asynchronously: the platform answering the command's build requests is this process
    await promisify(execFile)(
      process.execPath,
      [
        X_BIN,
        "template",
        "install",
        "code-interpreter-v1",
        "desktop",
        "--api-url",
        ctx.apiUrl,
        "--data-dir",
        SHIPPED_DATA_DIR,
      ],
      { maxBuffer: 256 * 1024 * 1024 },
    );
    bench.results.shipped.installMs = now() - t;
    log(`templates installed in ${(bench.results.shipped.installMs / 1000).toFixed(0)} s`);
  } finally {
    await closePlatform(ctx);
  }
}

export async function shippedScenarios(rt, cachedImages) {
  const { opts } = bench;
  linkImages(cachedImages);
  const ctx = await openPlatform(SHIPPED_DATA_DIR, {
    warmPoolSize: opts.pool,
    defaultRuntime: rt,
    reuse: true,
  });
  const S = {};
  bench.results.shipped[rt] = S;
  try {
    const env = { apiKey: ctx.apiKey, apiUrl: ctx.apiUrl, sandboxUrl: ctx.proxyUrl };
    const pool = ctx.platform.warmPool;
    const { Sandbox: CodeInterpreter } = require("@e2b/code-interpreter");
    const { Sandbox: Desktop } = require("@e2b/desktop");

    /**
     * `runs` creates, each after the pool has refilled (that wait is not timed). A template's
     * pool appears on its first create, which is made untimed first.
     */
    const pooled = async (name, fn) => {
      await fn();
      const samples = [];
      const t0 = now();
      for (let i = 0; i < opts.runs && more(i, t0, 3); i++) {
        await pool.whenFull(180_000).catch(() => undefined);
        samples.push(await fn());
      }
      S[name] = stats(samples);
    };
    await scenario(`${rt}: base create → first run(true), warm pool`, () =>
      pooled("base", async () => {
        const t = now();
        const sb = await createSandbox(ctx, rt);
        await runCmd(sb, "true");
        const ms = now() - t;
        await killSandbox(ctx, sb.id);
        return ms;
      }),
    );
    await scenario(`${rt}: @e2b/code-interpreter create → first runCode result, warm pool`, () =>
      pooled("codeInterpreter", async () => {
        const t = now();
        const sbx = await CodeInterpreter.create(env);
        const execution = await sbx.runCode("1 + 1");
        const ms = now() - t;
        await sbx.kill();
        if (execution.text !== "2") throw new Error(`runCode answered ${JSON.stringify(execution.toJSON())}`);
        return ms;
      }),
    );
    await scenario(
      `${rt}: @e2b/desktop create (with its start-up) → first screenshot, warm pool`,
      () =>
        pooled("desktop", async () => {
          const t = now();
          const desktop = await Desktop.create({ ...env, timeoutMs: 300_000 });
          const png = await desktop.screenshot();
          const ms = now() - t;
          await desktop.kill();
          if (png.length < 1000) throw new Error(`the screenshot has ${png.length} bytes`);
          return ms;
        }),
      { needMs: 120_000 },
    );
  } finally {
    await closePlatform(ctx);
  }
  note(
    `Shipped templates (${rt}): platform on ${SHIPPED_DATA_DIR}, kept between runs; the templates were installed before the budget started (${((bench.results.shipped.installMs ?? 0) / 1000).toFixed(0)} s this time: minutes on a machine's first run, seconds after), not in any figure. Each create waits for a full warm pool first (not timed).`,
  );
}
