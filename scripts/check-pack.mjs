// Packs the package in the current directory, installs the tarball into an empty project
// and loads it both ways (require and import), as a user of the published package would.
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const pkg = JSON.parse(readFileSync("package.json", "utf8"));
const expected = process.argv.slice(2);
const dir = mkdtempSync(path.join(os.tmpdir(), "x-pack-"));
try {
  execFileSync("pnpm", ["pack", "--pack-destination", dir], { stdio: "ignore" });
  const tarball = readdirSync(dir).find((f) => f.endsWith(".tgz"));
  writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "pack-check", private: true }));
  execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", `./${tarball}`], {
    cwd: dir,
    stdio: "inherit",
  });
  const probe = (code) => execFileSync(process.execPath, ["-e", code], { cwd: dir, encoding: "utf8" }).trim();
  const names = JSON.stringify(expected);
  // Every named export is a function, and the first (a client factory taking `{ baseUrl }`)
  // builds a client: this catches interop breakage that loading alone would not.
  const check = `const missing = ${names}.filter((n) => typeof m[n] !== "function");
    const client = missing.length ? undefined : m[${JSON.stringify(expected[0])}]({ baseUrl: "http://127.0.0.1:9" });
    console.log(missing.length ? "missing " + missing.join(",") : typeof client === "object" ? "" : "no client");`;
  const cjs = probe(`const m = require(${JSON.stringify(pkg.name)}); ${check}`);
  const esm = probe(`import(${JSON.stringify(pkg.name)}).then((m) => { ${check} })`);
  if (cjs || esm)
    throw new Error(`${pkg.name}: broken package (require: ${cjs || "ok"}, import: ${esm || "ok"})`);
  console.log(`${pkg.name}: packed, installed and loaded with require and import`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
