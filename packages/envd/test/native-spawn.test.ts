import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { Readable } from "node:stream";
import { finished } from "node:stream/promises";
import {
  type PipedChild,
  spawnChild,
  spawnInTerminal,
  type TerminalChild,
} from "../src/process/native-spawn.js";

const env = { PATH: "/usr/bin:/bin" };

function read(stream: Readable): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    stream.on("data", (c: Buffer) => chunks.push(c));
    stream.on("close", () => resolve(Buffer.concat(chunks).toString()));
  });
}

function exited(child: PipedChild | TerminalChild): Promise<[number | null, string | null]> {
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

describe("spawnInTerminal (a program in a pseudo-terminal, without forking envd)", () => {
  const inTerminal = (script: string, more: { uid?: number; gid?: number } = {}) =>
    spawnInTerminal({ file: "/bin/sh", args: ["-c", script], env, cwd: "/", cols: 100, rows: 30, ...more });

  test("the terminal is the program's controlling one and its 0, 1 and 2, at the size asked, UTF-8 input", async () => {
    const child = inTerminal(
      "tty; ps -o sid=,tty= -p $$; stty size; stty -a | grep -o -- '-\\?iutf8'; readlink /proc/self/fd/0 /proc/self/fd/2",
    );
    const [out, end] = [read(child.output), exited(child)];
    const lines = (await out).trim().split("\r\n");
    expect(await end).toEqual([0, null]);
    const tty = lines[0]!;
    expect(tty).toMatch(/^\/dev\/pts\/\d+$/);
    const [sid, ctty] = lines[1]!.trim().split(/\s+/);
    expect(Number(sid)).toBe(child.pid);
    expect(`/dev/${ctty}`).toBe(tty);
    expect(lines.slice(2)).toEqual(["30 100", "iutf8", tty, tty]);
  });

  test("echoes input, changes size (the program gets SIGWINCH) and hands over the terminal to the user", async () => {
    const child = inTerminal(
      'trap \'stty size\' WINCH; stat -c %u "$(tty)"; id -u; read line; echo "got $line"; sleep 0.5; exit 4',
      { uid: 65534, gid: 65534 },
    );
    let text = "";
    const seen: Array<[RegExp, () => void]> = [];
    child.output.on("data", (chunk: Buffer) => {
      text += chunk.toString().replace(/\r/g, "");
      for (const [pattern, resolve] of seen) if (pattern.test(text)) resolve();
    });
    const until = (pattern: RegExp) =>
      new Promise<void>((resolve) => (pattern.test(text) ? resolve() : seen.push([pattern, resolve])));
    const end = exited(child);
    await until(/^65534\n65534\n$/);
    child.input.write("hello\n");
    await until(/got hello\n$/);
    child.resize(120, 40);
    expect(await end).toEqual([4, null]);
    await finished(child.output);
    expect(text).toBe("65534\n65534\nhello\ngot hello\n40 120\n");
  });

  test("reads everything written before the hang-up, even when nobody read for a while", async () => {
    const child = inTerminal("seq 1 200000");
    // listened for from the start: the exit may come before the output's last byte is read
    const end = exited(child);
    child.output.pause();
    await new Promise((r) => setTimeout(r, 300));
    const out = read(child.output);
    child.output.resume();
    const lines = (await out).split("\r\n");
    expect(lines.length).toBe(200_001);
    expect(lines[199_999]).toBe("200000");
    expect(await end).toEqual([0, null]);
  });

  test("closing the terminal hangs up a process still holding it", async () => {
    const child = inTerminal("trap 'echo hup >&2; exit 9' HUP; echo ready; while :; do sleep 0.05; done");
    const ready = new Promise<void>((resolve) => child.output.once("data", () => resolve()));
    const end = exited(child);
    await ready;
    child.input.destroy();
    expect((await end)[0] ?? (await end)[1]).toBeTruthy();
    expect(existsSync(`/proc/${child.pid}`)).toBe(false);
  });
});
