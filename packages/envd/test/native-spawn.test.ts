import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { type PipedChild, spawnChild } from "../src/process/native-spawn.js";

const env = { PATH: "/usr/bin:/bin" };

function read(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("close", () => resolve(Buffer.concat(chunks).toString()));
  });
}

function exited(child: PipedChild): Promise<[number | null, string | null]> {
  return new Promise((resolve) => child.once("exit", (code, signal) => resolve([code, signal])));
}

function errorOf(fn: () => unknown): NodeJS.ErrnoException {
  try {
    fn();
  } catch (err) {
    return err as NodeJS.ErrnoException;
  }
  throw new Error("expected a throw");
}

describe("spawnChild (envd's vfork-style process creation)", () => {
  test("runs a program with its arguments, environment, directory and stdin pipe, and says how it ended", async () => {
    const child = spawnChild({
      file: "/bin/sh",
      args: ["-c", 'echo "$GREETING from $(pwd)"; cat; echo oops >&2; exit 3'],
      env: { ...env, GREETING: "hello" },
      cwd: "/tmp",
      stdin: true,
    });
    const [out, err, end] = [read(child.stdout), read(child.stderr), exited(child)];
    child.stdin?.end("piped in\n");
    expect(await out).toBe("hello from /tmp\npiped in\n");
    expect(await err).toBe("oops\n");
    expect(await end).toEqual([3, null]);
  });

  test("starts the child as a session leader with default signals, none blocked, as the user asked", async () => {
    const child = spawnChild({
      file: "/bin/sh",
      args: ["-c", "ps -o sid= -p $$; grep -E '^(SigBlk|SigIgn)' /proc/self/status; id -u; id -G"],
      env,
      cwd: "/",
      uid: 65534,
      gid: 65534,
      stdin: false,
    });
    const out = (await read(child.stdout)).trim().split("\n");
    expect(Number(out[0])).toBe(child.pid);
    expect(out[1]).toMatch(/^SigBlk:\s+0+$/);
    expect(out[2]).toMatch(/^SigIgn:\s+0+$/);
    expect(out.slice(3)).toEqual(["65534", "65534"]);
  });

  test("reports a death by signal by its name", async () => {
    const child = spawnChild({ file: "/bin/sleep", args: ["30"], env, cwd: "/", stdin: false });
    const end = exited(child);
    process.kill(child.pid, "SIGTERM");
    expect(await end).toEqual([null, "SIGTERM"]);
  });

  test("reaps every one of many children that end at once", async () => {
    const children = Array.from({ length: 200 }, () =>
      spawnChild({ file: "/bin/true", args: [], env, cwd: "/", stdin: false }),
    );
    const ends = await Promise.all(children.map(exited));
    expect(ends.every(([code]) => code === 0)).toBe(true);
    // reaped, not zombies
    expect(children.filter((c) => existsSync(`/proc/${c.pid}`))).toEqual([]);
  });

  test("lets go of SIGCHLD with its environment: a worker that used it ends, the process goes on", () => {
    // in a process of its own: the failure this guards against is a crash (the watcher's close
    // callback was code of the addon, which Node unloads with the worker)
    const addon = path.resolve(__dirname, "../native/build/Release/envd_spawn.node");
    const script = `
      const { Worker } = require("node:worker_threads");
      const { spawnSync } = require("node:child_process");
      const w = new Worker(${JSON.stringify(`
        const a = require(${JSON.stringify(addon)});
        a.onChildEnded(() => {});
        const [pid] = a.spawn("/bin/true", ["true"], [], "", -1, -1, false);
        setTimeout(() => { a.reap(pid); process.exit(0); }, 100);
      `)}, { eval: true });
      w.on("exit", () => {
        for (let i = 0; i < 5; i++) spawnSync("/bin/true");
        setTimeout(() => console.log("alive"), 100);
      });`;
    const r = spawnSync(process.execPath, ["-e", script], { encoding: "utf8" });
    expect({ status: r.status, signal: r.signal, stdout: r.stdout }).toEqual({
      status: 0,
      signal: null,
      stdout: "alive\n",
    });
  });

  test("throws Node-style errors when the program cannot start", () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "envd-spawn-"));
    try {
      const plain = path.join(dir, "not-executable");
      writeFileSync(plain, "#!/bin/sh\n");
      expect(
        errorOf(() => spawnChild({ file: "/no/such", args: [], env, cwd: "/", stdin: false })),
      ).toMatchObject({ code: "ENOENT", syscall: "spawn" });
      expect(errorOf(() => spawnChild({ file: plain, args: [], env, cwd: "/", stdin: false }))).toMatchObject(
        {
          code: "EACCES",
          syscall: "spawn",
        },
      );
      expect(
        errorOf(() =>
          spawnChild({ file: "/bin/true", args: [], env, cwd: path.join(dir, "gone"), stdin: false }),
        ),
      ).toMatchObject({ code: "ENOENT", syscall: "chdir" });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
