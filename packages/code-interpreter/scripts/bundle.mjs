// Bundles the code interpreter into files a sandbox runs with its own `node`: the server and
// the JavaScript and bash kernels, beside the Python bridge and display helpers (python/).
// The template's build copies dist/sandbox as it is (templates/code-interpreter-v1).
import { cp, mkdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const final = path.join(root, "dist", "sandbox");
const out = `${final}.tmp-${process.pid}`;

await rm(out, { recursive: true, force: true });
const entries = {
  server: "src/server/main.ts",
  "javascript-kernel": "src/kernels/javascript.ts",
  "bash-kernel": "src/kernels/bash.ts",
};
for (const [name, entry] of Object.entries(entries)) {
  await build({
    entryPoints: [path.join(root, entry)],
    outfile: path.join(out, `${name}.cjs`),
    bundle: true,
    platform: "node",
    target: "node20",
    format: "cjs",
    minifySyntax: true,
    legalComments: "none",
    logLevel: "warning",
  });
}
await mkdir(path.join(out, "python"), { recursive: true });
await cp(path.join(root, "python"), path.join(out, "python"), {
  recursive: true,
  filter: (src) => !src.includes("__pycache__"),
});
await cp(path.join(root, "java"), path.join(out, "java"), { recursive: true });

const old = `${final}.old-${process.pid}`;
await rename(final, old).catch(() => undefined);
await rename(out, final);
await rm(old, { recursive: true, force: true });
