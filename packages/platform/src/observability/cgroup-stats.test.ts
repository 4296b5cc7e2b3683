import { useFileTrees } from "../lib/file-tree.js";
import { readCgroupStats } from "./cgroup-stats.js";

describe("readCgroupStats", () => {
  const tree = useFileTrees("x-cgroup-");

  it("reads cgroup v1 controllers (the hybrid layout)", async () => {
    const root = tree({
      "cpuacct/x/sb/cpuacct.usage": "2500000000\n",
      "memory/x/sb/memory.usage_in_bytes": "50000\n",
      "memory/x/sb/memory.limit_in_bytes": "1073741824\n",
      "memory/x/sb/memory.stat": "cache 100\nrss 400\ntotal_cache 9000\ntotal_inactive_file 8000\n",
      "memory/x/free/memory.usage_in_bytes": "1\n",
      "memory/x/free/memory.limit_in_bytes": "9223372036854771712\n",
      "memory/x/free/memory.stat": "",
      "cpuacct/x/free/cpuacct.usage": "0\n",
    });
    expect(await readCgroupStats("/x/sb", root)).toEqual({
      cpuUsageNs: 2.5e9,
      memUsed: 42000,
      memCache: 9000,
      memLimit: 1073741824,
    });
    expect((await readCgroupStats("/x/free", root))?.memLimit).toBeUndefined();
    expect(await readCgroupStats("/x/gone", root)).toBeUndefined();
  });

  it("reads cgroup v2", async () => {
    const root = tree({
      "cgroup.controllers": "cpu memory pids\n",
      "x/sb/cpu.stat": "usage_usec 1500\nuser_usec 1000\nsystem_usec 500\n",
      "x/sb/memory.current": "70000\n",
      "x/sb/memory.stat": "anon 1000\nfile 30000\ninactive_file 20000\n",
      "x/sb/memory.max": "max\n",
    });
    expect(await readCgroupStats("/x/sb", root)).toEqual({
      cpuUsageNs: 1_500_000,
      memUsed: 50000,
      memCache: 30000,
      memLimit: undefined,
    });
    expect(await readCgroupStats("/x/gone", root)).toBeUndefined();
  });
});
