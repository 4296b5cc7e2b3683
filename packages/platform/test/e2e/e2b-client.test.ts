/**
 * The public `e2b` client, unchanged, against `x serve`'s pieces: it is pointed here with
 * E2B_API_URL, E2B_SANDBOX_URL and E2B_API_KEY exactly as a user would.
 */
import { Sandbox } from "e2b";
import { counterPassed, startCounter } from "../helpers/counter.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

describe.each(["runc", "runsc"] as const)("public e2b client on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({ runtime });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t.stop();
  });

  it("creates a sandbox, runs commands, writes and reads files, lists and kills", async () => {
    const sandbox = await Sandbox.create({ metadata: { suite: "e2e" } });
    try {
      const result = await sandbox.commands
        .run("echo hello; whoami; pwd; echo oops >&2; exit 3")
        .catch((e) => e.result ?? e);
      expect(result.stdout).toBe("hello\nuser\n/home/user\n");
      expect(result.stderr).toBe("oops\n");
      expect(result.exitCode).toBe(3);

      // /tmp is the sandbox's own disk under both runtimes (gVisor would make it a tmpfs).
      expect((await sandbox.commands.run("stat -f -c %T /tmp")).stdout.trim()).not.toBe("tmpfs");
      await sandbox.files.write("/home/user/notes/a.txt", "written through the proxy");
      expect(await sandbox.files.read("/home/user/notes/a.txt")).toBe("written through the proxy");
      const entries = await sandbox.files.list("/home/user/notes");
      expect(entries.map((e) => e.name)).toEqual(["a.txt"]);
      expect((await sandbox.commands.run("cat /home/user/notes/a.txt")).stdout).toBe(
        "written through the proxy",
      );
      // `ls -l` needs statx(AT_NO_AUTOMOUNT), which this gVisor lacks without the preloaded shim.
      expect((await sandbox.commands.run("ls -l /home/user/notes")).stdout).toMatch(
        /-rw-r--r-- 1 user user\s+25 .* a\.txt/,
      );

      const listed = await Sandbox.list({ query: { metadata: { suite: "e2e" } } }).nextItems();
      expect(listed.map((s) => s.sandboxId)).toContain(sandbox.sandboxId);
      expect(await sandbox.isRunning()).toBe(true);
    } finally {
      await sandbox.kill();
    }
    expect(await sandbox.isRunning()).toBe(false);
    await expect(Sandbox.connect(sandbox.sandboxId)).rejects.toThrow(/not found/i);
  });

  it("opens a terminal: a login shell as the user, typed input, a resize, its exit code", async () => {
    const sandbox = await Sandbox.create();
    try {
      let text = "";
      const decoder = new TextDecoder();
      const terminal = await sandbox.pty.create({
        cols: 80,
        rows: 24,
        onData: (data) => {
          text += decoder.decode(data, { stream: true });
        },
      });
      const type = (s: string) => sandbox.pty.sendInput(terminal.pid, new TextEncoder().encode(s));
      const until = async (pattern: RegExp) => {
        for (const t0 = Date.now(); !pattern.test(text); ) {
          if (Date.now() - t0 > 20_000) throw new Error(`no ${pattern} in ${JSON.stringify(text)}`);
          await new Promise((r) => setTimeout(r, 20));
        }
      };
      await type("echo $((6*7))-$(whoami)-$(tty | cut -c1-9); stty size\n");
      await until(/42-user-\/dev\/pts\/\r?\n24 80\r?\n/);
      await sandbox.pty.resize(terminal.pid, { cols: 100, rows: 30 });
      await type("stty size; exit 7\n");
      const end = await terminal.wait().catch((err) => err.result ?? err);
      expect(end.exitCode).toBe(7);
      expect(text).toMatch(/30 100\r?\n/);
    } finally {
      await sandbox.kill();
    }
  });

  it("pauses and resumes: frozen keeps processes, a filesystem-only pause keeps files", async () => {
    const sandbox = await Sandbox.create({ timeoutMs: 120_000 });
    const advanced = (from: number) => counterPassed(sandbox, from);
    try {
      await sandbox.files.write("/home/user/kept.txt", "kept");
      await startCounter(sandbox);
      const before = await advanced(0);

      expect(await sandbox.pause()).toBe(true);
      expect(await sandbox.isRunning()).toBe(false);
      expect(await Sandbox.pause(sandbox.sandboxId)).toBe(false);
      const [listed] = await Sandbox.list({ query: { state: ["paused"] } }).nextItems();
      expect(listed?.sandboxId).toBe(sandbox.sandboxId);
      await sandbox.connect();
      expect(await sandbox.isRunning()).toBe(true);
      // The counter goes on from where it was: the process and its memory survived.
      expect(await advanced(before)).toBeGreaterThan(before);

      expect(await sandbox.pause({ keepMemory: false })).toBe(true);
      expect((await t.platform.store.sandboxes.get(sandbox.sandboxId))?.pauseKind).toBe("stopped");
      await sandbox.connect();
      expect(await sandbox.files.read("/home/user/kept.txt")).toBe("kept");
      expect((await sandbox.commands.run("pgrep -f 'while tru[e]' || true")).stdout).toBe("");
    } finally {
      await sandbox.kill();
    }
  });
});
