// Runs every package's jest suite in one jest invocation and ends with one plain line,
// "tests: N passed, N failed", that CI and people can read at a glance.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";

const dir = mkdtempSync(path.join(os.tmpdir(), "x-tests-"));
const results = path.join(dir, "results.json");
const run = spawnSync(
  "pnpm",
  ["exec", "jest", "--ci", "--json", `--outputFile=${results}`, ...process.argv.slice(2)],
  { stdio: "inherit" },
);
let summary = { numPassedTests: 0, numFailedTests: 0, numPendingTests: 0, numTotalTests: 0 };
try {
  summary = JSON.parse(readFileSync(results, "utf8"));
} catch {
  console.error("run-tests: jest wrote no results");
}
rmSync(dir, { recursive: true, force: true });
const skipped = summary.numPendingTests ? `, ${summary.numPendingTests} skipped` : "";
console.log(`tests: ${summary.numPassedTests} passed, ${summary.numFailedTests} failed${skipped}`);
const ranNone = summary.numTotalTests === 0;
process.exit(run.status === 0 && !ranNone ? 0 : 1);
