import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "../lib/log.js";
import { archiveConsoleLog, ConsoleLogKeeper, trimToNewest } from "./console-log.js";

const MiB = 2 ** 20;
const log = createLogger({ level: "silent", format: "json" });
const lines = (n: number, from = 0) =>
  `${Array.from({ length: n }, (_, i) => `line ${String(from + i).padStart(7, "0")}`).join("\n")}\n`;

/** A writer holding the file O_APPEND, as the container holds its console; resolves once it wrote `bytes`. */
function appender(file: string, bytes: number): { child: ChildProcess; done: Promise<void> } {
  const child = spawn("sh", ["-c", `head -c ${bytes} /dev/zero | tr '\\0' 'x' >> "$1"`, "sh", file], {
    stdio: "ignore",
  });
  return { child, done: new Promise((resolve) => child.once("exit", () => resolve())) };
}

describe.each([
  ["ext4 (collapse in place)", os.tmpdir(), "collapsed"],
  ["tmpfs (copy of the tail)", "/dev/shm", "copied"],
])("console logs on %s", (_name, parent, how) => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(parent, "x-console-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("trims a log to about its newest bytes", async () => {
    const file = path.join(dir, "console.log");
    writeFileSync(file, lines(200_000));
    const before = readFileSync(file);
    expect(await trimToNewest(file, MiB)).toBe(how);
    const after = readFileSync(file);
    // whole blocks go in place: up to one block more than asked stays
    expect(after.length).toBeGreaterThanOrEqual(MiB);
    expect(after.length).toBeLessThan(MiB + 64 * 1024);
    expect(before.subarray(before.length - after.length).equals(after)).toBe(true);
    expect(await trimToNewest(file, 4 * MiB)).toBe("kept");
  });

  it("keeps a log a writer floods within about twice the limit, the writer's appends going on", async () => {
    const file = path.join(dir, "console.log");
    writeFileSync(file, "");
    const keeper = new ConsoleLogKeeper({ maxBytes: MiB, files: async () => [file], log, sweepMs: 20 });
    keeper.start();
    keeper.keep(file);
    let largest = 0;
    const sampler = setInterval(() => {
      largest = Math.max(largest, statSync(file).size);
    }, 2);
    try {
      const writer = appender(file, 256 * MiB);
      await writer.done;
      await keeper.check(file);
      await keeper.check(file);
    } finally {
      clearInterval(sampler);
      keeper.close();
    }
    const size = statSync(file).size;
    process.stderr.write(
      `${how}: 256 MiB appended, largest size seen ${(largest / MiB).toFixed(1)} MiB, now ${(size / MiB).toFixed(1)} MiB\n`,
    );
    expect(size).toBeLessThanOrEqual(2 * MiB);
    // the newest bytes are the writer's last ones: its appends went on at the new end
    expect(
      readFileSync(file)
        .subarray(-1000)
        .every((b) => b === 0x78),
    ).toBe(true);
  });
});

describe("a stopped sandbox's console", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-console-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("moves the newest part of the running log after what is kept, within the limit", async () => {
    const kept = path.join(dir, "console.log");
    const running = path.join(dir, "disk-console.log");
    writeFileSync(kept, "earlier 1\nearlier 2\n");
    writeFileSync(running, "now 1\nnow 2\n");
    await archiveConsoleLog(running, kept, 1024);
    expect(readFileSync(kept, "utf8")).toBe("earlier 1\nearlier 2\nnow 1\nnow 2\n");
    expect(existsSync(running)).toBe(false);

    writeFileSync(running, lines(1000));
    await archiveConsoleLog(running, kept, 100);
    expect(readFileSync(kept, "utf8")).toBe(lines(1000).slice(-100));
    // no running log (a sandbox without a disk): nothing changes
    await archiveConsoleLog(running, kept, 100);
    expect(readFileSync(kept, "utf8")).toBe(lines(1000).slice(-100));
  });
});
