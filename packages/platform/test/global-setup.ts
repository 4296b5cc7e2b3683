import { execFileSync } from "node:child_process";
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
 * Before any test file runs: the envd bundle that sandboxes boot, and the base image (built
 * once per machine, minutes the first time), so parallel test files never race to build it.
 */
export default async function globalSetup(): Promise<void> {
  resolveTsSources();
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
}
