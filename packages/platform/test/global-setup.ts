import { execFileSync } from "node:child_process";
import { readdirSync, rmSync } from "node:fs";
import Module from "node:module";
import path from "node:path";

/**
 * jest's moduleNameMapper does not apply to globalSetup, so relative `.js` imports (NodeNext
 * style) are mapped to their `.ts` sources here, the way the test projects map them.
 */
function resolveTsSources(): void {
  const mod = Module as unknown as { _resolveFilename: (request: string, ...rest: unknown[]) => string };
  const original = mod._resolveFilename;
  mod._resolveFilename = (request, ...rest) => {
    try {
      return original(request, ...rest);
    } catch (err) {
      if (request.startsWith(".") && request.endsWith(".js")) return original(request.slice(0, -3), ...rest);
      throw err;
    }
  };
}

/**
 * What a killed earlier run left (its test platforms never got to clean up): containers,
 * mounts, network namespaces, links and firewall tables of test platforms, their data, and
 * scratch PostgreSQL clusters.
 * One test run at a time per machine, so everything of that kind is a leftover here.
 */
async function sweepTestLeftovers(): Promise<void> {
  const { removeLeftovers, X_SERVE_DATA_PREFIX } =
    require("./helpers/x-serve.js") as typeof import("./helpers/x-serve.js");
  const { TEST_PREFIX } =
    require("./helpers/test-networks.js") as typeof import("./helpers/test-networks.js");
  const { TEST_DATA_DIR } = require("./helpers/platform.js") as typeof import("./helpers/platform.js");
  const parent = path.dirname(X_SERVE_DATA_PREFIX);
  const serveDirs = readdirSync(parent)
    .map((name) => path.join(parent, name))
    .filter((dir) => dir.startsWith(X_SERVE_DATA_PREFIX));
  await removeLeftovers([TEST_DATA_DIR, ...serveDirs], TEST_PREFIX);
  const { removeScratchPostgres, SCRATCH_PG_PREFIX } =
    require("./helpers/scratch-postgres.js") as typeof import("./helpers/scratch-postgres.js");
  for (const name of readdirSync(path.dirname(SCRATCH_PG_PREFIX))) {
    const dir = path.join(path.dirname(SCRATCH_PG_PREFIX), name);
    if (dir.startsWith(SCRATCH_PG_PREFIX)) removeScratchPostgres(dir);
  }
  for (const dir of serveDirs) rmSync(dir, { recursive: true, force: true });
  // sandboxes and warm pool records of the shared data dir; its images stay (the cache)
  for (const sub of ["sandboxes", "pool"])
    rmSync(path.join(TEST_DATA_DIR, sub), { recursive: true, force: true });
}

/**
 * Before any test file runs: what a killed earlier run left is removed, then the envd bundle
 * that sandboxes boot and the base image (built once per machine, minutes the first time) are
 * made, so parallel test files never race to build them.
 */
export default async function globalSetup(): Promise<void> {
  resolveTsSources();
  // a second run beside another (see test-networks.ts) must not sweep the first one's platforms
  if (process.env.X_TEST_NO_SWEEP !== "1") await sweepTestLeftovers();
  execFileSync(process.execPath, [path.resolve(__dirname, "../../envd/scripts/bundle.mjs")], {
    stdio: "inherit",
  });
  const { ensureBaseImage } =
    require("../src/rootfs/base-image.js") as typeof import("../src/rootfs/base-image.js");
  const { TEST_DATA_DIR } = require("./helpers/platform.js") as typeof import("./helpers/platform.js");
  const started = Date.now();
  let phase = "";
  const image = await ensureBaseImage({
    dataDir: TEST_DATA_DIR,
    // one line per phase, not per package
    onProgress: (p) => {
      if (p.phase === phase) return;
      phase = p.phase;
      process.stderr.write(`base image: ${p.phase} (${Math.floor((100 * p.done) / p.total)}%)\n`);
    },
  });
  if (image.built)
    process.stderr.write(`base image built in ${Math.round((Date.now() - started) / 1000)} s\n`);
  await installShipped();
}

/**
 * The templates that ship with the platform, built once per run before any test file (their
 * Debian packages make minutes of work the first time; seconds when cached): the suites that
 * use them then find them ready. X_TEST_SHIPPED_TEMPLATES=0 leaves them to those suites, for a
 * quick run of other files.
 */
async function installShipped(): Promise<void> {
  if (process.env.X_TEST_SHIPPED_TEMPLATES === "0") return;
  const { SHIPPED_TEMPLATES } =
    require("../src/model/template.js") as typeof import("../src/model/template.js");
  const { installShippedTemplates, READY_ENV } =
    require("./helpers/shipped-templates.js") as typeof import("./helpers/shipped-templates.js");
  const started = Date.now();
  await installShippedTemplates([...SHIPPED_TEMPLATES]);
  // test workers start after this and inherit the environment
  process.env[READY_ENV] = SHIPPED_TEMPLATES.join(",");
  process.stderr.write(
    `shipped templates (${SHIPPED_TEMPLATES.join(", ")}) ready in ${Math.round((Date.now() - started) / 1000)} s\n`,
  );
}
