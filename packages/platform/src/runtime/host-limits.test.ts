import { readFileSync } from "node:fs";
import path from "node:path";
import { useFileTrees } from "../lib/file-tree.js";
import { silentLogger } from "../lib/log.js";
import { reserveHostTasks } from "./host-limits.js";

describe("reserveHostTasks", () => {
  const tree = useFileTrees("x-host-limits-");
  const read = (root: string, file: string) => readFileSync(path.join(root, file), "utf8");

  it("raises pid_max and keeps a fifth of the tasks from every sandbox together (v1)", async () => {
    const root = tree({ "sys/pid_max": "32768\n", "sys/threads-max": "190000\n", "cg/pids/.keep": "" });
    const limits = await reserveHostTasks(silentLogger, {
      procSys: path.join(root, "sys"),
      cgroupRoot: path.join(root, "cg"),
    });
    expect(read(root, "sys/pid_max")).toBe("4194304");
    expect(limits).toEqual({ pidMax: 4194304, sandboxTasks: 152000 });
    expect(read(root, "cg/pids/x/pids.max")).toBe("152000");
  });

  it("hands the pids controller down under v2 and keeps at least 4096 tasks", async () => {
    const root = tree({
      "sys/pid_max": "4194304\n",
      "sys/threads-max": "10000\n",
      "cg/cgroup.controllers": "cpu memory pids\n",
      "cg/cgroup.subtree_control": "cpu memory\n",
    });
    const limits = await reserveHostTasks(silentLogger, {
      procSys: path.join(root, "sys"),
      cgroupRoot: path.join(root, "cg"),
    });
    expect(limits).toEqual({ pidMax: 4194304, sandboxTasks: 10000 - 4096 });
    expect(read(root, "cg/cgroup.subtree_control")).toBe("+pids");
    expect(read(root, "cg/x/pids.max")).toBe(String(10000 - 4096));
  });
});
