import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { fileTree } from "../lib/file-tree.js";
import { silentLogger } from "../lib/log.js";
import { BUSY_SHARES, CpuFairness, NORMAL_SHARES } from "./cpu-fairness.js";

describe("CpuFairness", () => {
  let root: string;
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it("weighs down a sandbox that keeps a core busy, and back once it is calm (v1)", async () => {
    root = fileTree({
      "cpuacct/x/spin/cpuacct.usage": "0\n",
      "cpu/x/spin/cpu.shares": "1024\n",
      "cpuacct/x/idle/cpuacct.usage": "0\n",
      "cpu/x/idle/cpu.shares": "1024\n",
    });
    const fair = new CpuFairness({ ids: () => ["spin", "idle"], log: silentLogger, cgroupRoot: root });
    const use = (id: string, ns: number) =>
      writeFileSync(path.join(root, `cpuacct/x/${id}/cpuacct.usage`), String(ns));
    const shares = (id: string) => readFileSync(path.join(root, `cpu/x/${id}/cpu.shares`), "utf8").trim();
    // fake time: each tick is 1 s later, the spinner using 2 cores' worth
    let clock = 1_000_000;
    const now = jest.spyOn(Date, "now").mockImplementation(() => clock);
    try {
      let spun = 0;
      for (let i = 0; i < 4; i++) {
        await fair.tick();
        clock += 1000;
        spun += 2e9;
        use("spin", spun);
      }
      await fair.tick();
      expect(shares("spin")).toBe(String(BUSY_SHARES));
      expect(shares("idle")).toBe("1024");
      expect(fair.busy()).toEqual(["spin"]);
      // calm: no more CPU for the window
      for (let i = 0; i < 4; i++) {
        clock += 1000;
        await fair.tick();
      }
      expect(shares("spin")).toBe(String(NORMAL_SHARES));
      expect(fair.busy()).toEqual([]);
    } finally {
      now.mockRestore();
    }
  });
});
