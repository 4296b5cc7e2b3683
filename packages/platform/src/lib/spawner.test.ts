import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { Spawner } from "./spawner.js";

describe("Spawner", () => {
  const spawner = new Spawner();
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(path.join(tmpdir(), "spawner-"));
  });
  afterAll(async () => {
    spawner.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("runs a command in a process of its own and returns its output and exit code", async () => {
    const r = await spawner.run({ file: "sh", args: ["-c", "echo out; echo err >&2; echo $PPID; exit 3"] });
    expect(r.code).toBe(3);
    const [out, ppid] = r.stdout.trim().split("\n");
    expect(out).toBe("out");
    expect(r.stderr).toBe("err\n");
    // the command's parent is the helper, not this process
    expect(Number(ppid)).toBe(spawner.pid);
    expect(Number(ppid)).not.toBe(process.pid);
  });

  it("feeds stdin, passes env and cwd", async () => {
    const r = await spawner.run({
      file: "sh",
      args: ["-c", "cat; echo $GREETING; pwd"],
      input: "in\n",
      env: { ...process.env, GREETING: "hi" },
      cwd: dir,
    });
    expect(r).toMatchObject({ code: 0, stdout: `in\nhi\n${dir}\n` });
  });

  it("reports a missing binary and a timeout", async () => {
    const missing = await spawner.run({ file: "/nonexistent/bin", args: [] });
    expect(missing.code).toBe("ENOENT");
    const slow = await spawner.run({ file: "sleep", args: ["5"], timeoutMs: 100 });
    expect(slow.code).toBe("SIGTERM");
    expect(slow.error).toBe("timed out");
  });

  it("appends a detached command's output to a file", async () => {
    const file = path.join(dir, "console.log");
    await spawner.run({ file: "sh", args: ["-c", "echo one"], outputFile: file });
    const r = await spawner.run({ file: "sh", args: ["-c", "echo two >&2; exit 1"], outputFile: file });
    expect(r.code).toBe(1);
    expect(await readFile(file, "utf8")).toBe("one\ntwo\n");
  });

  it("fails the commands of a helper that dies and starts a new one", async () => {
    const running = spawner.run({ file: "sleep", args: ["5"] });
    const helper = spawner.pid!;
    process.kill(helper, "SIGKILL");
    const r = await running;
    expect(r.code).toBeNull();
    expect(r.error).toMatch(/helper exited/);
    const again = await spawner.run({ file: "true", args: [] });
    expect(again.code).toBe(0);
    expect(spawner.pid).not.toBe(helper);
  });

  it("runs commands concurrently", async () => {
    // each waits for the other's mark: run one after the other, both would time out
    const waitFor = (mine: string, theirs: string) =>
      spawner.run({
        file: "sh",
        args: ["-c", `touch ${mine}; while [ ! -e ${theirs} ]; do sleep 0.01; done`],
        cwd: dir,
        timeoutMs: 10_000,
      });
    const results = await Promise.all([waitFor("a", "b"), waitFor("b", "a")]);
    expect(results.map((r) => r.code)).toEqual([0, 0]);
  });
});
