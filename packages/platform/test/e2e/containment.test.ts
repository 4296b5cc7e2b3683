/**
 * Misbehaving code ends itself, not the sandbox, under both runtimes, as a user sees it through
 * the public client: a command that takes all the memory ends with 137 and says why, a fork
 * bomb is ended and later commands run at once, and the sandbox answers all along.
 */
import { Sandbox } from "e2b";
import { useE2bSandbox } from "../helpers/platform.js";

describe.each(["runc", "runsc"] as const)("containment on %s", (runtime) => {
  const suite = useE2bSandbox(runtime);

  const run = async (cmd: string, timeoutMs = 60_000) => {
    const r = await suite.sandbox.commands
      .run(cmd, { timeoutMs })
      .catch((e: { result?: unknown }) => e.result ?? e);
    return r as { stdout: string; stderr: string; exitCode: number; error?: string };
  };

  /** Processes in the sandbox besides envd and its init, once the ps of the count is gone. */
  const processCount = async () => Number((await run("ps -e --no-headers | wc -l")).stdout.trim()) - 4;

  it("ends a command that takes all the memory, says why, and keeps answering", async () => {
    // 16 MiB at a time, written so that the pages are really taken
    const hog = await run(`node -e "const a = []; for (;;) a.push(Buffer.alloc(16 << 20, 1))"`);
    expect(hog.exitCode).toBe(137);
    expect(hog.error).toMatch(/out of memory/);
    expect(await run("echo still here")).toMatchObject({ exitCode: 0, stdout: "still here\n" });
    // what it held is given back: the next one can take as much
    const again = await run(
      `node -e "const a = []; for (let i = 0; i < 8; i++) a.push(Buffer.alloc(16 << 20, 1)); console.log('ok')"`,
    );
    expect(again).toMatchObject({ exitCode: 0, stdout: "ok\n" });
  });

  it("ends a fork bomb's session and says why, the sandbox answering meanwhile", async () => {
    // a command leading a bomb: its session is the largest and ends, the leader with it
    const bomb = run(`bash -c ':(){ :|:& };: ; sleep 120' >/dev/null 2>&1`, 90_000);
    const during = await run("echo answering");
    expect(during).toMatchObject({ exitCode: 0, stdout: "answering\n" });
    const ended = await bomb;
    expect(ended.exitCode).toBe(137);
    expect(ended.error).toMatch(/too many processes/);
    // nothing of it is left
    for (let i = 0; i < 50 && (await processCount()) > 5; i++) await new Promise((r) => setTimeout(r, 200));
    expect(await processCount()).toBeLessThanOrEqual(5);
  });

  it("ends a bomb that outlived its command, and later commands run", async () => {
    // the command returns at once; the bomb starts after it, in the command's session (started
    // within the command, a loaded host could see the bomb fill the sandbox before it returned)
    const bomb =
      "(sleep 0.5; touch /tmp/bomb-went-off; exec timeout 30 bash -c ':(){ :|:& };:') >/dev/null 2>&1 &";
    expect(await run(`${bomb} echo started`)).toMatchObject({ exitCode: 0, stdout: "started\n" });
    await new Promise((r) => setTimeout(r, 1000));
    // the bomb did go off: what follows is tested beside it, not in a quiet sandbox
    expect(await suite.sandbox.files.exists("/tmp/bomb-went-off")).toBe(true);
    for (const word of ["one", "two", "three"]) {
      expect(await run(`echo ${word}`)).toMatchObject({ exitCode: 0, stdout: `${word}\n` });
    }
    for (let i = 0; i < 50 && (await processCount()) > 5; i++) await new Promise((r) => setTimeout(r, 200));
    expect(await processCount()).toBeLessThanOrEqual(5);
    expect(await suite.sandbox.isRunning()).toBe(true);
  });

  it("refuses writes past a full disk with ENOSPC, keeps answering, and gives the space back", async () => {
    // all of the free space but a MiB at once, then more than that MiB
    const fill = await run(
      "fallocate -l $(( $(df --output=avail -B1 /home/user | tail -1) - 1048576 )) /home/user/fill && head -c 8M /dev/zero > /home/user/more",
    );
    expect(fill.exitCode).not.toBe(0);
    expect(fill.stderr).toMatch(/No space left on device/);
    expect(await run("echo still here")).toMatchObject({ exitCode: 0, stdout: "still here\n" });
    // envd's own file API says so too, with the client's error
    await expect(suite.sandbox.files.write("/home/user/one-more", "x".repeat(4 << 20))).rejects.toThrow(
      /space|storage|507/i,
    );
    expect(
      await run(
        "rm -f /home/user/fill /home/user/more /home/user/one-more && head -c 8M /dev/zero > /home/user/more && echo ok",
      ),
    ).toMatchObject({
      exitCode: 0,
      stdout: "ok\n",
    });
    await run("rm -f /home/user/more");
  });

  it("reports a sandbox whose agent died as broken, answers at once, and boots it afresh on connect", async () => {
    const broken = await Sandbox.create({ timeoutMs: 300_000 });
    try {
      await broken.files.write("/home/user/kept.txt", "kept");
      // envd itself (not the init, which holds the pid namespace): the request dies with it
      await broken.commands
        .run("sudo kill -9 $(pgrep -f '^/opt/x/bin/node /opt/x/envd/envd.cjs')", { timeoutMs: 20_000 })
        .catch(() => undefined);
      const info = async () => {
        const res = await fetch(`${suite.platform.apiUrl}/sandboxes/${broken.sandboxId}`, {
          headers: { "X-API-Key": suite.platform.apiKey },
        });
        return (await res.json()) as { state: string; reason?: string };
      };
      let state = await info();
      for (let i = 0; i < 100 && state.state !== "error"; i++) {
        await new Promise((r) => setTimeout(r, 100));
        state = await info();
      }
      expect(state).toMatchObject({ state: "error", reason: expect.stringMatching(/envd/) });
      // a call gets the error that the sandbox is not running, not a hang to its deadline
      await expect(broken.commands.run("echo hi", { timeoutMs: 30_000 })).rejects.toThrow(/not running/);
      // listed with its state; it does not count as running
      const listed = await fetch(`${suite.platform.apiUrl}/v2/sandboxes?state=error`, {
        headers: { "X-API-Key": suite.platform.apiKey },
      });
      expect(((await listed.json()) as Array<{ sandboxID: string }>).map((s) => s.sandboxID)).toContain(
        broken.sandboxId,
      );
      // connect boots it afresh from its files
      const again = await Sandbox.connect(broken.sandboxId);
      expect((await again.commands.run("cat /home/user/kept.txt")).stdout).toBe("kept");
      expect((await info()).state).toBe("running");
    } finally {
      await broken.kill().catch(() => undefined);
    }
  });
});
