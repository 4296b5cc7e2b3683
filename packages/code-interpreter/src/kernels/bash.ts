import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { createInterface } from "node:readline";
import { emit, onRequests, serially } from "./channel.js";

/**
 * The bash kernel: one bash for the context's life, so `cd`, variables and functions carry from
 * cell to cell. Each cell is written to a file and sourced; bash reports the cell's exit status
 * on its fd 3, and its output goes straight to this kernel's stdout and stderr, which are the
 * cell's. An interrupt sends SIGINT to what the cell started, not to bash.
 */

const cells = mkdtempSync(path.join(tmpdir(), "x-bash-kernel-"));
const bash = spawn("bash", ["--noprofile", "--norc"], { stdio: ["pipe", "inherit", "inherit", "pipe"] });
const statuses = createInterface({ input: bash.stdio[3] as NodeJS.ReadableStream });
let waiting: ((status: number) => void) | undefined;
statuses.on("line", (line) => {
  const w = waiting;
  waiting = undefined;
  w?.(Number(line));
});
bash.on("exit", (code, signal) => {
  rmSync(cells, { recursive: true, force: true });
  emit({ ev: "fatal", message: `bash exited (${signal ?? code})` });
  process.exit(1);
});
process.on("SIGINT", () => interrupt());
process.on("exit", () => rmSync(cells, { recursive: true, force: true }));

let count = 0;

function interrupt(): void {
  // the cell's processes are bash's children; bash itself keeps its state
  spawn("pkill", ["-INT", "-P", String(bash.pid)], { stdio: "ignore" });
}

const execute = serially(async (req) => {
  if (!req.silent) emit({ ev: "count", id: req.id, n: ++count });
  const file = path.join(cells, `cell-${count}-${req.id}.sh`);
  writeFileSync(file, `${req.code}\n`);
  const status = await new Promise<number>((resolve) => {
    waiting = resolve;
    bash.stdin!.write(`source ${file} 3>&-; printf '%s\\n' "$?" >&3\n`);
  });
  rmSync(file, { force: true });
  if (status !== 0 && !req.silent) {
    emit({
      ev: "error",
      id: req.id,
      name: "BashError",
      value: `the cell exited with status ${status}`,
      traceback: [`the cell exited with status ${status}`],
    });
  }
});

onRequests((req) => {
  if (req.op === "execute") execute(req);
  else if (req.op === "interrupt") interrupt();
  else if (req.op === "shutdown") {
    bash.kill("SIGKILL");
    process.exit(0);
  }
});
emit({ ev: "ready" });
