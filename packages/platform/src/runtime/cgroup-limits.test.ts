import { readFileSync } from "node:fs";
import path from "node:path";
import { useFileTrees } from "../lib/file-tree.js";
import { cgroupLife, setCgroupLimits, sharesToWeight } from "./cgroup-limits.js";

describe("setCgroupLimits", () => {
  const tree = useFileTrees("x-cgroup-limits-");
  const read = (root: string, file: string) => readFileSync(path.join(root, file), "utf8");

  it("writes cgroup v1 limits, memory+swap kept at or above memory whichever way it moves", async () => {
    const root = tree({
      "memory/x/sb/memory.limit_in_bytes": "1073741824\n",
      "memory/x/sb/memory.memsw.limit_in_bytes": "1073741824\n",
      "pids/x/sb/pids.max": "max\n",
      "cpu/x/sb/cpu.shares": "1024\n",
    });
    await setCgroupLimits("/x/sb", { memoryBytes: 2 * 2 ** 30, pidsMax: 1088, cpuShares: 256 }, root);
    expect(read(root, "memory/x/sb/memory.limit_in_bytes")).toBe(String(2 * 2 ** 30));
    expect(read(root, "memory/x/sb/memory.memsw.limit_in_bytes")).toBe(String(2 * 2 ** 30));
    expect(read(root, "pids/x/sb/pids.max")).toBe("1088");
    expect(read(root, "cpu/x/sb/cpu.shares")).toBe("256");
    await setCgroupLimits("/x/sb", { memoryBytes: 2 ** 29 }, root);
    expect(read(root, "memory/x/sb/memory.limit_in_bytes")).toBe(String(2 ** 29));
    expect(read(root, "memory/x/sb/memory.memsw.limit_in_bytes")).toBe(String(2 ** 29));
  });

  it("works without swap accounting (no memsw file) under v1", async () => {
    const root = tree({ "memory/x/sb/memory.limit_in_bytes": "1073741824\n" });
    await setCgroupLimits("/x/sb", { memoryBytes: 2 ** 31 }, root);
    expect(read(root, "memory/x/sb/memory.limit_in_bytes")).toBe(String(2 ** 31));
  });

  it("writes cgroup v2 limits: no swap, weight from shares", async () => {
    const root = tree({
      "cgroup.controllers": "cpu memory pids\n",
      "x/sb/memory.max": "max\n",
      "x/sb/memory.swap.max": "max\n",
      "x/sb/pids.max": "max\n",
      "x/sb/cpu.weight": "100\n",
    });
    await setCgroupLimits("/x/sb", { memoryBytes: 2 ** 30, pidsMax: 200, cpuShares: 1024 }, root);
    expect(read(root, "x/sb/memory.max")).toBe(String(2 ** 30));
    expect(read(root, "x/sb/memory.swap.max")).toBe("0");
    expect(read(root, "x/sb/pids.max")).toBe("200");
    expect(read(root, "x/sb/cpu.weight")).toBe(String(sharesToWeight(1024)));
  });

  it("fails on a cgroup that is not there, so a caller never believes a limit it did not set", async () => {
    const root = tree({ "cgroup.controllers": "memory\n" });
    await expect(setCgroupLimits("/x/gone", { pidsMax: 10 }, root)).rejects.toThrow(/ENOENT/);
  });
});

describe("cgroupLife", () => {
  const tree = useFileTrees("x-cgroup-life-");

  it("counts a container's processes and OOM kills under v1", async () => {
    const root = tree({
      "memory/x/up/cgroup.procs": "1\n2\n",
      "memory/x/up/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 0\n",
      "memory/x/dead/cgroup.procs": "",
      "memory/x/dead/memory.oom_control": "oom_kill_disable 0\nunder_oom 0\noom_kill 2\n",
      "pids/x/pidsonly/cgroup.procs": "7\n",
    });
    expect(await cgroupLife("/x/up", root)).toEqual({ processes: 2, oomKills: 0 });
    expect(await cgroupLife("/x/dead", root)).toEqual({ processes: 0, oomKills: 2 });
    expect((await cgroupLife("/x/pidsonly", root)).processes).toBe(1);
    expect(await cgroupLife("/x/gone", root)).toEqual({ processes: undefined, oomKills: undefined });
  });

  it("counts them under v2", async () => {
    const root = tree({
      "cgroup.controllers": "memory pids\n",
      "x/up/cgroup.procs": "1\n",
      "x/up/memory.events": "low 0\nhigh 0\nmax 3\noom 1\noom_kill 1\n",
    });
    expect(await cgroupLife("/x/up", root)).toEqual({ processes: 1, oomKills: 1 });
    expect((await cgroupLife("/x/gone", root)).processes).toBeUndefined();
  });
});

describe("sharesToWeight", () => {
  it("maps v1 shares onto v2 weights as runc does", () => {
    expect(sharesToWeight(2)).toBe(1);
    expect(sharesToWeight(1024)).toBe(39);
    expect(sharesToWeight(262144)).toBe(10000);
    expect(sharesToWeight(1)).toBe(1);
    expect(sharesToWeight(10 ** 9)).toBe(10000);
  });
});
