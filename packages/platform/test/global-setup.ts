import { execFileSync } from "node:child_process";
import path from "node:path";
import { ensureBaseImage } from "../src/rootfs/base-image.js";
import { TEST_DATA_DIR } from "./helpers/platform.js";

/**
 * Before any test file runs: the envd bundle that sandboxes boot, and the base image (built
 * once per machine, minutes the first time), so parallel test files never race to build it.
 */
export default async function globalSetup(): Promise<void> {
  execFileSync(process.execPath, [path.resolve(__dirname, "../../envd/scripts/bundle.mjs")], { stdio: "inherit" });
  const started = Date.now();
  const image = await ensureBaseImage({
    dataDir: TEST_DATA_DIR,
    onProgress: (p) => {
      if (p.phase !== "packages") process.stderr.write(`base image: ${p.phase}: ${p.line}\n`);
    },
  });
  if (image.built) process.stderr.write(`base image built in ${Math.round((Date.now() - started) / 1000)} s\n`);
}
