import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { createLogger } from "./log.js";
import { ChildRecords, processStartTime, spawnOwned } from "./owned-process.js";

const quiet = createLogger({ level: "silent" });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("owned processes", () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "x-owned-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it("tells a running process from a gone one", () => {
    expect(processStartTime(process.pid)).toMatch(/^\d+$/);
    expect(processStartTime(2 ** 22 + 1)).toBeUndefined();
  });

  it("records a child while it runs, and the next start ends the one a killed run left", async () => {
    const records = new ChildRecords(dir, quiet);
    const child = spawnOwned("sleep", ["300"], { stdio: "ignore" }, records);
    try {
      for (let i = 0; i < 50 && readdirSync(dir).length === 0; i++) await sleep(20);
      expect(readdirSync(dir)).toEqual([`${child.pid}.json`]);
      // as if this process had been killed: a new one reads the records and ends what is left
      const exited = new Promise((resolve) => child.once("exit", (_code, signal) => resolve(signal)));
      expect(await new ChildRecords(dir, quiet).endLeftovers()).toEqual([child.pid]);
      expect(await exited).toBe("SIGKILL");
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      child.kill("SIGKILL");
    }
  });

  it("leaves alone a recorded pid that now belongs to another process", async () => {
    // a record naming a running process with another start time: its pid was reused
    const other = spawn("sleep", ["300"], { stdio: "ignore" });
    try {
      const startTime = String(Number(processStartTime(other.pid!)) + 1);
      writeFileSync(
        path.join(dir, `${other.pid}.json`),
        JSON.stringify({ pid: other.pid, startTime, argv: ["sleep"] }),
      );
      expect(await new ChildRecords(dir, quiet).endLeftovers()).toEqual([]);
      expect(processStartTime(other.pid!)).toBeDefined();
      expect(readdirSync(dir)).toEqual([]);
    } finally {
      other.kill("SIGKILL");
    }
  });
});
