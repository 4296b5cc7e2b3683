#!/usr/bin/env node
// Runs one example by hand against a running platform (`x serve`), configured by the
// environment: X_API_URL, X_SANDBOX_URL, X_API_KEY (or the E2B_* names).
//
//   node examples/run.mjs run-code
//
// The example is bundled with esbuild (which the workspace has through tsup), with `@x/sdk`
// taken from the SDK's sources, into a temporary file that is imported and removed.
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const { build } = createRequire(createRequire(import.meta.url).resolve("tsup"))("esbuild");

const here = path.dirname(fileURLToPath(import.meta.url));
const examples = readdirSync(here)
  .filter((f) => f.endsWith(".ts") && f !== "shared.ts")
  .map((f) => f.slice(0, -3));
const name = process.argv[2];
if (!name || !examples.includes(name)) {
  console.error(`usage: node examples/run.mjs <${examples.join("|")}>`);
  process.exit(2);
}

const out = mkdtempSync(path.join(os.tmpdir(), "x-example-"));
try {
  await build({
    entryPoints: [path.join(here, `${name}.ts`)],
    outfile: path.join(out, `${name}.mjs`),
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@x/source"],
    logLevel: "warning",
    plugins: [
      {
        name: "sdk-from-source",
        setup(b) {
          b.onResolve({ filter: /^@x\/sdk$/ }, () => ({
            path: path.join(here, "..", "packages", "sdk", "src", "index.ts"),
          }));
        },
      },
    ],
  });
  const { main } = await import(pathToFileURL(path.join(out, `${name}.mjs`)).href);
  const result = await main();
  console.log(JSON.stringify(result, null, 2));
} finally {
  rmSync(out, { recursive: true, force: true });
}
