/**
 * The public e2b client in debug mode (E2B_DEBUG=true) talks to envd on localhost:49983 with
 * no platform and no token: files, commands, PTY and watch against the real envd, unchanged.
 * envd acts as `nobody` here: the client runs commands in login shells, and this host's
 * root login profile is not ours to depend on.
 */
import { chmodSync, rmSync } from "node:fs";
import path from "node:path";
import { FilesystemEventType, Sandbox } from "e2b";
import { type RunningEnvd, startEnvd, tempDir } from "./helpers/envd-process.js";

describe("public e2b client in debug mode", () => {
  let envd: RunningEnvd;
  let sandbox: Sandbox;
  let dir: string;
  const saved = process.env.E2B_DEBUG;

  beforeAll(async () => {
    envd = await startEnvd({ port: 49983, defaultUser: "nobody" });
    process.env.E2B_DEBUG = "true";
    sandbox = await Sandbox.connect("debug");
    dir = tempDir("e2b-debug-");
    chmodSync(dir, 0o777);
  });

  afterAll(async () => {
    process.env.E2B_DEBUG = saved;
    await envd.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("writes, reads, lists, renames and removes files", async () => {
    const file = path.join(dir, "nested", "hello.txt");
    const info = await sandbox.files.write(file, "hello from the e2b client");
    expect(info.path).toBe(file);
    expect(await sandbox.files.read(file)).toBe("hello from the e2b client");
    expect(await sandbox.files.exists(file)).toBe(true);
    expect((await sandbox.files.list(path.join(dir, "nested"))).map((e) => e.name)).toEqual(["hello.txt"]);
    const moved = await sandbox.files.rename(file, path.join(dir, "moved.txt"));
    expect(moved.name).toBe("moved.txt");
    expect(await sandbox.files.makeDir(path.join(dir, "made"))).toBe(true);
    expect(await sandbox.files.makeDir(path.join(dir, "made"))).toBe(false);
    await sandbox.files.remove(path.join(dir, "moved.txt"));
    expect(await sandbox.files.exists(path.join(dir, "moved.txt"))).toBe(false);
    await expect(sandbox.files.read(path.join(dir, "missing.txt"))).rejects.toThrow(
      /does not exist|not found/i,
    );
  });

  it("runs commands in the foreground and background", async () => {
    const result = await sandbox.commands.run("echo out; echo err >&2", {
      cwd: dir,
      envs: { GREETING: "hi" },
    });
    expect(result).toMatchObject({ exitCode: 0, stdout: "out\n", stderr: "err\n" });
    expect((await sandbox.commands.run("echo $GREETING", { envs: { GREETING: "hi" } })).stdout).toBe("hi\n");
    await expect(sandbox.commands.run("exit 7")).rejects.toMatchObject({ exitCode: 7 });

    const handle = await sandbox.commands.run("read line; echo got:$line", { background: true, stdin: true });
    await sandbox.commands.sendStdin(handle.pid, "typed\n");
    const done = await handle.wait();
    expect(done.stdout).toBe("got:typed\n");

    const sleeper = await sandbox.commands.run("sleep 30", { background: true });
    expect((await sandbox.commands.list()).map((p) => p.pid)).toContain(sleeper.pid);
    expect(await sandbox.commands.kill(sleeper.pid)).toBe(true);
    await expect(sleeper.wait()).rejects.toBeDefined();
  });

  it("drives a PTY", async () => {
    let output = "";
    const terminal = await sandbox.pty.create({
      cols: 80,
      rows: 24,
      onData: (data) => {
        output += Buffer.from(data).toString();
      },
    });
    await sandbox.pty.resize(terminal.pid, { cols: 100, rows: 30 });
    await sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode("stty size; exit\n"));
    await terminal.wait().catch(() => undefined);
    expect(output).toContain("30 100");
  });

  it("watches a directory", async () => {
    const events: { name: string; type: FilesystemEventType }[] = [];
    const watcher = await sandbox.files.watchDir(dir, (e) => void events.push(e), { recursive: true });
    await sandbox.files.write(path.join(dir, "watched.txt"), "x");
    const deadline = Date.now() + 5000;
    while (
      !events.some((e) => e.name === "watched.txt" && e.type === FilesystemEventType.WRITE) &&
      Date.now() < deadline
    ) {
      await new Promise((r) => setTimeout(r, 50));
    }
    await watcher.stop();
    expect(events).toContainEqual({ name: "watched.txt", type: FilesystemEventType.CREATE });
    expect(events).toContainEqual({ name: "watched.txt", type: FilesystemEventType.WRITE });
  });
});
