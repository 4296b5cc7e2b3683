/**
 * Containment's parts that run safely outside a sandbox: ending one session whole, and the end
 * reasons it gives. The watchdogs themselves run in the platform's containment e2e test (they
 * pick victims among all processes they see, which outside a sandbox would be the host's).
 */
import { spawn } from "node:child_process";
import { Containment } from "../src/containment/containment.js";
import { killSession, processTable } from "../src/containment/proc-table.js";

/** Live (not yet reaped zombies aside) processes among `pids`. */
const living = async (pids: number[]) => {
  const live = new Set((await processTable(new Set())).map((e) => e.pid));
  return pids.filter((p) => live.has(p));
};

describe("killSession", () => {
  it("ends every process of a session, children and process groups of its own included", async () => {
    // a session leader, a child, a grandchild in a process group of its own
    const leader = spawn("bash", ["-c", "sleep 60 & set -m; sleep 61 & wait"], {
      detached: true,
      stdio: "ignore",
    });
    const sid = leader.pid!;
    try {
      let members: number[] = [];
      for (let i = 0; i < 100 && members.length < 3; i++) {
        await new Promise((r) => setTimeout(r, 20));
        members = (await processTable(new Set([process.pid]))).filter((e) => e.sid === sid).map((e) => e.pid);
      }
      expect(members.length).toBe(3);
      const exited = new Promise((r) => leader.once("exit", r));
      expect(await killSession(sid, new Set([process.pid]))).toBe(3);
      await exited;
      expect(await living(members)).toEqual([]);
    } finally {
      try {
        process.kill(-sid, "SIGKILL");
      } catch {
        // gone
      }
    }
  });
});

describe("Containment.explain", () => {
  const containment = new Containment(
    { memoryLimitBytes: 512 * 2 ** 20, processLimit: 100 },
    () => undefined,
  );

  it("leaves ends it did not cause as they were", async () => {
    const end = {
      type: "end" as const,
      exitCode: -1,
      exited: false,
      status: "signal: killed",
      signal: "SIGKILL",
    };
    expect(await containment.explain(4242, end, {})).toEqual(end);
    const normal = { type: "end" as const, exitCode: 0, exited: true, status: "exit status 0" };
    expect(await containment.explain(4242, normal, {})).toEqual(normal);
  });
});

describe("the watchdogs", () => {
  const until = async (what: () => boolean) => {
    for (let i = 0; i < 100 && !what(); i++) await new Promise((r) => setTimeout(r, 50));
    return what();
  };

  it("rest while nothing but envd and the init runs, and watch again from the next start", async () => {
    // the sandbox's processes as the watchdog lists them (outside a sandbox /proc is the host's)
    let pids = [1, process.pid];
    const containment = new Containment(
      { processLimit: 1000 },
      () => undefined,
      async () => pids,
    );
    containment.start();
    try {
      expect(await until(() => containment.resting)).toBe(true);
      // a command starts: watching again at once, and as long as it runs
      await containment.beforeSpawn();
      pids = [1, process.pid, 4242];
      expect(containment.resting).toBe(false);
      await new Promise((r) => setTimeout(r, 1200));
      expect(containment.resting).toBe(false);
      // it ended (and left nothing behind): resting again
      pids = [1, process.pid];
      expect(await until(() => containment.resting)).toBe(true);
    } finally {
      containment.stop();
    }
  });

  it("do not rest on a poll that raced a start", async () => {
    let answer: ((pids: number[]) => void) | undefined;
    const containment = new Containment(
      { processLimit: 1000 },
      () => undefined,
      () => {
        return new Promise<number[]>((resolve) => {
          answer = resolve;
        });
      },
    );
    containment.start();
    try {
      // the first poll is listing the processes; a start comes before its answer
      expect(await until(() => answer !== undefined)).toBe(true);
      await containment.beforeSpawn();
      answer!([1, process.pid]);
      await new Promise((r) => setTimeout(r, 50));
      expect(containment.resting).toBe(false);
    } finally {
      containment.stop();
    }
  });
});
