import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import type { MessageInitShape } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { createConnectTransport, Http2SessionManager } from "@connectrpc/connect-node";
import {
  createEnvdClient,
  type EnvdClient,
  envdInterceptor,
  type ProcessEvent,
  type ProcessEvent_EndEvent,
  Signal,
  type StreamInputRequestSchema,
} from "@x/envd-client";
import { CommandExitError, Sandbox, TimeoutError } from "e2b";
import { type RunningEnvd, startEnvd, tempDir } from "./helpers/envd-process.js";

let envd: RunningEnvd;
let client: EnvdClient;
let dir: string;

beforeAll(async () => {
  envd = await startEnvd();
  client = envd.client;
  dir = tempDir("envd-process-");
});

afterAll(async () => {
  await envd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const asUser = (name: string) => ({ Authorization: `Basic ${Buffer.from(`${name}:`).toString("base64")}` });
const bytes = (text: string) => new TextEncoder().encode(text);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Alive and not a zombie (an orphan whose reaper has not run yet is as good as gone). */
function isAlive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

async function waitUntil(
  condition: () => boolean | Promise<boolean>,
  what: string,
  ms = 5000,
): Promise<void> {
  const deadline = Date.now() + ms;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(25);
  }
}

async function expectCode(promise: Promise<unknown>, code: Code, message?: RegExp): Promise<ConnectError> {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(ConnectError);
  const connectErr = err as ConnectError;
  expect(Code[connectErr.code]).toBe(Code[code]);
  if (message) expect(connectErr.rawMessage).toMatch(message);
  return connectErr;
}

/** Reads a Start or Connect stream, checking its shape: start first, nothing after end. */
class Reader {
  readonly chunks: Record<"stdout" | "stderr" | "pty", Buffer[]> = { stdout: [], stderr: [], pty: [] };
  /** Output streams in arrival order, one entry per data event. */
  readonly order: string[] = [];
  keepalives = 0;
  end: ProcessEvent_EndEvent | undefined;
  private readonly it: AsyncIterator<{ event?: ProcessEvent }>;

  constructor(events: AsyncIterable<{ event?: ProcessEvent }>) {
    this.it = events[Symbol.asyncIterator]();
  }

  async start(): Promise<number> {
    const first = await this.it.next();
    const event = first.value?.event?.event;
    if (event?.case !== "start") throw new Error(`expected a start event first, got ${event?.case}`);
    expect(event.value.pid).toBeGreaterThan(0);
    return event.value.pid;
  }

  text(stream: "stdout" | "stderr" | "pty"): string {
    return Buffer.concat(this.chunks[stream]).toString("utf8");
  }

  bytes(stream: "stdout" | "stderr" | "pty"): Buffer {
    return Buffer.concat(this.chunks[stream]);
  }

  private async step(): Promise<boolean> {
    const next = await this.it.next();
    if (next.done) return false;
    const event = next.value.event?.event;
    if (this.end) throw new Error(`event ${event?.case} after end`);
    switch (event?.case) {
      case "data": {
        const out = event.value.output;
        if (!out.case) throw new Error("empty data event");
        this.chunks[out.case].push(Buffer.from(out.value));
        this.order.push(out.case);
        break;
      }
      case "keepalive":
        this.keepalives++;
        break;
      case "end":
        this.end = event.value;
        break;
      default:
        throw new Error(`unexpected event ${event?.case}`);
    }
    return true;
  }

  async until(condition: (r: Reader) => boolean): Promise<void> {
    while (!condition(this)) {
      if (!(await this.step()))
        throw new Error(`stream ended first; stdout=${this.text("stdout")} pty=${this.text("pty")}`);
    }
  }

  async toEnd(): Promise<ProcessEvent_EndEvent> {
    while (await this.step());
    if (!this.end) throw new Error("stream closed without an end event");
    return this.end;
  }
}

interface BashOptions {
  envs?: Record<string, string>;
  cwd?: string;
  stdin?: boolean;
  tag?: string;
  headers?: Record<string, string>;
  timeoutMs?: number;
  signal?: AbortSignal;
  on?: EnvdClient;
}

/**
 * Starts `/bin/bash -c <script>`. Not a login shell (`-l`, as `commands.run` sends): this host's
 * root profile is slow, and killing it halfway leaves pyenv's lock file behind. The e2b client
 * tests below cover `-l`, killing only processes of `nobody`, who has no profile.
 */
function bash(script: string, opts: BashOptions = {}): Reader {
  const { envs = {}, cwd, stdin = false, tag, headers, timeoutMs, signal, on = client } = opts;
  return new Reader(
    on.process.start(
      { process: { cmd: "/bin/bash", args: ["-c", script], envs, cwd }, stdin, tag },
      { headers, timeoutMs, signal },
    ),
  );
}

async function run(script: string, opts: BashOptions = {}): Promise<Reader> {
  const reader = bash(script, opts);
  await reader.start();
  await reader.toEnd();
  return reader;
}

describe("Start", () => {
  test("says where its time went inside envd (Server-Timing with the start event)", async () => {
    let timing: string | null = null;
    const events = client.process.start(
      { process: { cmd: "/bin/true", args: [], envs: {} }, stdin: false },
      { onHeader: (h) => (timing = h.get("server-timing")) },
    );
    for await (const _ of events) {
      // read to the end
    }
    const steps = Object.fromEntries(
      (timing ?? "").split(", ").map((step) => {
        const [name, dur] = step.split(";dur=");
        return [name, Number(dur)];
      }),
    );
    expect(Object.keys(steps)).toEqual(["request", "user", "plan", "spawn", "log"]);
    for (const ms of Object.values(steps)) expect(ms).toBeGreaterThanOrEqual(0);
  });

  test("reports exit codes the way the reference envd does", async () => {
    const ok = await run("true");
    expect(ok.end).toMatchObject({ exitCode: 0, exited: true, status: "exit status 0" });
    expect(ok.end?.error).toBeUndefined();

    const failed = await run("exit 3");
    expect(failed.end).toMatchObject({
      exitCode: 3,
      exited: true,
      status: "exit status 3",
      error: "exit status 3",
    });
  });

  test("keeps stdout and stderr apart", async () => {
    const r = await run("echo out; echo err >&2; echo out2");
    expect(r.text("stdout")).toBe("out\nout2\n");
    expect(r.text("stderr")).toBe("err\n");
  });

  test("passes envs, cwd and the user", async () => {
    const env = await run('echo "$FOO|$HOME|$USER|$LOGNAME"', { envs: { FOO: "bar baz" } });
    expect(env.text("stdout")).toBe("bar baz|/root|root|root\n");

    const cwd = await run("pwd", { cwd: dir });
    expect(cwd.text("stdout")).toBe(`${dir}\n`);

    const home = await run("pwd");
    expect(home.text("stdout")).toBe("/root\n");

    const nobody = await run('id -un; id -G; echo "$HOME|$USER"; pwd', {
      headers: asUser("nobody"),
      cwd: "/tmp",
    });
    // Only nobody's own groups: envd's (root's) supplementary groups must not leak.
    expect(nobody.text("stdout")).toBe("nobody\n65534\n/nonexistent|nobody\n/tmp\n");

    // nobody has no home directory; without a cwd the process starts in /.
    const homeless = await run("pwd", { headers: asUser("nobody") });
    expect(homeless.text("stdout")).toBe("/\n");
  });

  test("rejects an unknown user, a missing cwd and a missing program", async () => {
    await expectCode(
      bash("true", { headers: asUser("no-such-user") }).start(),
      Code.Unauthenticated,
      /no-such-user/,
    );
    await expectCode(
      bash("true", { cwd: `${dir}/missing` }).start(),
      Code.InvalidArgument,
      /missing' does not exist/,
    );
    await expectCode(
      new Reader(client.process.start({ process: { cmd: "/no/such/program", args: [], envs: {} } })).start(),
      Code.InvalidArgument,
      /\/no\/such\/program/,
    );
  });

  test("streams 1000 lines without loss and in order", async () => {
    const r = await run("for i in $(seq 1 1000); do echo line $i; done");
    const expected = Array.from({ length: 1000 }, (_, i) => `line ${i + 1}\n`).join("");
    expect(r.text("stdout")).toBe(expected);
  });

  test("streams binary output byte for byte", async () => {
    const data = Buffer.alloc(300_000);
    for (let i = 0; i < data.length; i++) data[i] = (i * 7 + (i >> 8)) & 0xff;
    const file = path.join(dir, "binary.bin");
    writeFileSync(file, data);
    const r = await run(`cat ${file}; printf '\\377\\376' >&2`);
    expect(r.bytes("stdout").equals(data)).toBe(true);
    expect([...r.bytes("stderr")]).toEqual([0xff, 0xfe]);
  });

  test("delivers everything to a client that reads slowly", async () => {
    const r = bash("seq 1 300000");
    await r.start();
    await sleep(1000);
    await r.toEnd();
    const lines = r.text("stdout").split("\n");
    expect(lines.length).toBe(300_001);
    expect(lines[0]).toBe("1");
    expect(lines[299_999]).toBe("300000");
  });

  test("sends keepalives at the interval the client asks for", async () => {
    const r = await run("sleep 2.5", { headers: { "Keepalive-Ping-Interval": "1" } });
    expect(r.keepalives).toBeGreaterThanOrEqual(2);
    expect(r.end?.exitCode).toBe(0);
  });

  test("ends when the process exits even if a background child keeps its output open", async () => {
    const r = bash("sleep 30 & echo started");
    const pid = await r.start();
    try {
      const end = await r.toEnd();
      expect(end.exitCode).toBe(0);
      expect(r.text("stdout")).toBe("started\n");
    } finally {
      process.kill(-pid, "SIGKILL");
    }
  });
});

describe("stdin", () => {
  test("SendInput then CloseStdin ends cat", async () => {
    const r = bash("cat", { stdin: true });
    const pid = await r.start();
    await client.process.sendInput({
      process: { selector: { case: "pid", value: pid } },
      input: { input: { case: "stdin", value: bytes("hello\n") } },
    });
    await r.until((x) => x.text("stdout") === "hello\n");
    await client.process.closeStdin({ process: { selector: { case: "pid", value: pid } } });
    expect(await r.toEnd()).toMatchObject({ exitCode: 0 });
    expect(r.text("stdout")).toBe("hello\n");
  });

  test("an absent stdin field means stdin is open", async () => {
    const r = new Reader(
      client.process.start({ process: { cmd: "/bin/bash", args: ["-c", "cat"], envs: {} } }),
    );
    const pid = await r.start();
    const selector = { selector: { case: "pid" as const, value: pid } };
    await client.process.sendInput({
      process: selector,
      input: { input: { case: "stdin", value: bytes("abc") } },
    });
    await client.process.closeStdin({ process: selector });
    await r.toEnd();
    expect(r.text("stdout")).toBe("abc");
  });

  test("stdin false reads end of file and refuses input", async () => {
    const eof = await run("cat; echo after", { stdin: false });
    expect(eof.text("stdout")).toBe("after\n");

    const r = bash("sleep 30", { stdin: false });
    const pid = await r.start();
    const selector = { selector: { case: "pid" as const, value: pid } };
    await expectCode(
      client.process.sendInput({ process: selector, input: { input: { case: "stdin", value: bytes("x") } } }),
      Code.FailedPrecondition,
      /stdin of process \d+ is not enabled/,
    );
    await expectCode(
      client.process.sendInput({ process: selector, input: { input: { case: "pty", value: bytes("x") } } }),
      Code.FailedPrecondition,
      /has no PTY/,
    );
    await expectCode(
      client.process.update({ process: selector, pty: { size: { cols: 10, rows: 10 } } }),
      Code.FailedPrecondition,
    );
    await client.process.sendSignal({ process: selector, signal: Signal.SIGKILL });
    await r.toEnd();
  });

  test("StreamInput over HTTP/2 (h2c on envd's port)", async () => {
    const sessionManager = new Http2SessionManager(envd.url);
    try {
      const transport = createConnectTransport({
        baseUrl: envd.url,
        httpVersion: "2",
        sessionManager,
        interceptors: [envdInterceptor({ baseUrl: envd.url })],
      });
      const h2 = createEnvdClient({ baseUrl: envd.url, transport });
      const r = bash("cat", { stdin: true, on: h2 });
      const pid = await r.start();
      async function* input(): AsyncGenerator<MessageInitShape<typeof StreamInputRequestSchema>> {
        yield { event: { case: "start", value: { process: { selector: { case: "pid", value: pid } } } } };
        for (const part of ["one ", "two ", "three"]) {
          yield {
            event: { case: "data", value: { input: { input: { case: "stdin", value: bytes(part) } } } },
          };
        }
        yield { event: { case: "keepalive", value: {} } };
      }
      await h2.process.streamInput(input());
      await r.until((x) => x.text("stdout") === "one two three");
      await h2.process.closeStdin({ process: { selector: { case: "pid", value: pid } } });
      expect(await r.toEnd()).toMatchObject({ exitCode: 0 });
    } finally {
      sessionManager.abort();
    }
  });
});

describe("PTY", () => {
  test("echoes typed input, resizes and exits", async () => {
    const r = new Reader(
      client.process.start({
        process: {
          cmd: "/bin/bash",
          args: ["-i", "-l"],
          envs: { TERM: "xterm-256color", LANG: "C.UTF-8" },
          cwd: dir,
        },
        pty: { size: { cols: 80, rows: 24 } },
      }),
    );
    const pid = await r.start();
    const selector = { selector: { case: "pid" as const, value: pid } };
    const type = (text: string) =>
      client.process.sendInput({ process: selector, input: { input: { case: "pty", value: bytes(text) } } });

    await type("echo $((40+2))-marker; echo $TERM\n");
    await r.until((x) => /42-marker\r?\nxterm-256color/.test(x.text("pty")));

    await type("stty size\n");
    await r.until((x) => x.text("pty").includes("24 80"));

    await client.process.update({ process: selector, pty: { size: { cols: 100, rows: 30 } } });
    await type("stty size\n");
    await r.until((x) => x.text("pty").includes("30 100"));

    await expectCode(client.process.closeStdin({ process: selector }), Code.FailedPrecondition, /Ctrl\+D/);
    await expectCode(
      client.process.sendInput({ process: selector, input: { input: { case: "stdin", value: bytes("x") } } }),
      Code.FailedPrecondition,
      /PTY/,
    );

    await type("exit 5\n");
    expect(await r.toEnd()).toMatchObject({ exitCode: 5, exited: true });
    expect(r.order.every((s) => s === "pty")).toBe(true);
  });

  test("loses none of the output a process writes just before it exits, even to a slow reader", async () => {
    const r = new Reader(
      client.process.start({
        process: { cmd: "/bin/bash", args: ["-c", "seq 1 300000"], envs: {} },
        pty: { size: { cols: 80, rows: 24 } },
      }),
    );
    await r.start();
    await sleep(1000);
    expect(await r.toEnd()).toMatchObject({ exitCode: 0 });
    const lines = r.text("pty").split("\r\n");
    expect(lines.length).toBe(300_001);
    expect(lines[299_999]).toBe("300000");
  });

  test("runs as the requested user without envd's groups", async () => {
    const r = new Reader(
      client.process.start(
        {
          process: { cmd: "/bin/bash", args: ["-c", "id -un; id -G"], envs: {}, cwd: "/tmp" },
          pty: { size: { cols: 80, rows: 24 } },
        },
        { headers: asUser("nobody") },
      ),
    );
    await r.start();
    await r.toEnd();
    expect(r.text("pty").replace(/\r/g, "")).toBe("nobody\n65534\n");
  });
});

describe("reconnect, list and signals", () => {
  test("a client connecting again gets what it missed: all that envd kept, or from its offset", async () => {
    const first = new AbortController();
    const r = bash("echo one; sleep 0.1; echo two >&2; sleep 0.6; echo three", {
      signal: first.signal,
      timeoutMs: 20_000,
    });
    const pid = await r.start();
    await sleep(300);
    first.abort();
    const selector = { selector: { case: "pid" as const, value: pid } };
    // no offset (the e2b client): everything kept, each chunk with its offset
    const again = new Reader(client.process.connect({ process: selector }));
    // an offset: from that byte on ("one\n" is 4 bytes, "two\n" the next 4)
    const fromTwo = new Reader(client.process.connect({ process: selector, outputOffset: 4n }));
    const late = new Reader(client.process.connect({ process: selector, outputOffset: 8n }));
    await Promise.all([again.start(), fromTwo.start(), late.start()]);
    await Promise.all([again.toEnd(), fromTwo.toEnd(), late.toEnd()]);
    expect(again.text("stdout")).toBe("one\nthree\n");
    expect(again.text("stderr")).toBe("two\n");
    expect(fromTwo.text("stdout")).toBe("three\n");
    expect(fromTwo.text("stderr")).toBe("two\n");
    expect(late.text("stdout")).toBe("three\n");
    expect(late.text("stderr")).toBe("");
  });

  test("a second client connects by tag and by pid after the first disconnected", async () => {
    const first = new AbortController();
    const r = bash("sleep 0.5; for i in 1 2 3; do echo tick $i; sleep 0.2; done", {
      tag: "ticker",
      signal: first.signal,
    });
    const pid = await r.start();
    first.abort();

    const second = createEnvdClient({ baseUrl: envd.url });
    const listed = await second.process.list({});
    const info = listed.processes.find((p) => p.pid === pid);
    expect(info).toBeDefined();
    expect(info?.tag).toBe("ticker");
    expect(info?.config).toMatchObject({
      cmd: "/bin/bash",
      args: ["-c", expect.stringContaining("tick")],
    });

    const byTag = new Reader(
      second.process.connect({ process: { selector: { case: "tag", value: "ticker" } } }),
    );
    const byPid = new Reader(second.process.connect({ process: { selector: { case: "pid", value: pid } } }));
    expect(await byTag.start()).toBe(pid);
    expect(await byPid.start()).toBe(pid);
    const [endTag, endPid] = await Promise.all([byTag.toEnd(), byPid.toEnd()]);
    expect(endTag.exitCode).toBe(0);
    expect(endPid.exitCode).toBe(0);
    expect(byTag.text("stdout")).toBe("tick 1\ntick 2\ntick 3\n");
    expect(byPid.text("stdout")).toBe("tick 1\ntick 2\ntick 3\n");

    const after = await second.process.list({});
    expect(after.processes.some((p) => p.pid === pid)).toBe(false);
    await expectCode(
      new Reader(second.process.connect({ process: { selector: { case: "pid", value: pid } } })).start(),
      Code.NotFound,
      new RegExp(`pid ${pid} not found`),
    );
  });

  test("a client cancelling its Start stream leaves the process running", async () => {
    const marker = path.join(dir, "survived");
    const controller = new AbortController();
    const r = bash(`sleep 0.5; echo yes > ${marker}`, { signal: controller.signal, timeoutMs: 20_000 });
    const pid = await r.start();
    controller.abort();
    await expect(r.toEnd()).rejects.toThrow();
    await waitUntil(() => !isAlive(pid), "the process to finish on its own");
    expect(readFileSync(marker, "utf8")).toBe("yes\n");
  });

  test("Connect-Timeout-Ms on Start kills the process", async () => {
    const r = bash("sleep 30", { timeoutMs: 500 });
    const pid = await r.start();
    await expectCode(r.toEnd(), Code.DeadlineExceeded);
    await waitUntil(() => !isAlive(pid), "the process to be killed");
    await waitUntil(
      async () => !(await client.process.list({})).processes.some((p) => p.pid === pid),
      "the process to leave the list",
    );
  });

  test("SIGTERM and SIGKILL end the process group with the right end event", async () => {
    const term = bash("sleep 30", { stdin: false });
    const termPid = await term.start();
    await client.process.sendSignal({
      process: { selector: { case: "pid", value: termPid } },
      signal: Signal.SIGTERM,
    });
    expect(await term.toEnd()).toMatchObject({
      exitCode: -1,
      exited: false,
      status: "signal: terminated",
      error: "signal: terminated",
    });

    const kill = bash("sleep 30 & echo $!; wait");
    const killPid = await kill.start();
    await kill.until((x) => x.text("stdout").endsWith("\n"));
    const childPid = Number(kill.text("stdout").trim());
    expect(isAlive(childPid)).toBe(true);
    await client.process.sendSignal({
      process: { selector: { case: "pid", value: killPid } },
      signal: Signal.SIGKILL,
    });
    expect(await kill.toEnd()).toMatchObject({ exitCode: -1, exited: false, status: "signal: killed" });
    await waitUntil(() => !isAlive(childPid), "the background child to die with its group");
  });

  test("names what it cannot find and refuses an unspecified signal", async () => {
    await expectCode(
      client.process.sendSignal({
        process: { selector: { case: "pid", value: 4_000_000 } },
        signal: Signal.SIGKILL,
      }),
      Code.NotFound,
      /pid 4000000 not found/,
    );
    await expectCode(
      client.process.sendInput({
        process: { selector: { case: "tag", value: "nope" } },
        input: { input: { case: "stdin", value: bytes("x") } },
      }),
      Code.NotFound,
      /tag 'nope' not found/,
    );
    const r = bash("sleep 30");
    const pid = await r.start();
    const selector = { selector: { case: "pid" as const, value: pid } };
    await expectCode(
      client.process.sendSignal({ process: selector, signal: Signal.UNSPECIFIED }),
      Code.InvalidArgument,
      /SIGNAL_SIGTERM/,
    );
    await client.process.sendSignal({ process: selector, signal: Signal.SIGKILL });
    await r.toEnd();
  });

  test("every subscriber sees output and the end when the process exits mid-stream", async () => {
    const r = bash("read line; echo got $line; echo bye >&2", { stdin: true });
    const pid = await r.start();
    const watcher = new Reader(
      client.process.connect({ process: { selector: { case: "pid", value: pid } } }),
    );
    await watcher.start();
    await client.process.sendInput({
      process: { selector: { case: "pid", value: pid } },
      input: { input: { case: "stdin", value: bytes("it\n") } },
    });
    const [a, b] = await Promise.all([r.toEnd(), watcher.toEnd()]);
    expect(a.exitCode).toBe(0);
    expect(b.exitCode).toBe(0);
    for (const reader of [r, watcher]) {
      expect(reader.text("stdout")).toBe("got it\n");
      expect(reader.text("stderr")).toBe("bye\n");
    }
  });
});

describe("the public e2b client", () => {
  let sandbox: Sandbox;

  beforeAll(async () => {
    sandbox = await Sandbox.create({ debug: true, sandboxUrl: envd.url });
  });

  test("commands.run, exit errors and users", async () => {
    const result = await sandbox.commands.run("echo hello; echo oops >&2");
    expect(result).toMatchObject({ exitCode: 0, stdout: "hello\n", stderr: "oops\n" });

    const failure = await sandbox.commands.run("echo partial; exit 7").catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(CommandExitError);
    expect(failure).toMatchObject({ exitCode: 7, stdout: "partial\n", error: "exit status 7" });

    const who = await sandbox.commands.run("id -un", { user: "nobody", cwd: "/tmp" });
    expect(who.stdout).toBe("nobody\n");
  });

  test("megabytes of stdout and stderr arrive whole and in order", async () => {
    const lines = 1_500_000;
    const result = await sandbox.commands.run(`seq 1 ${lines}; seq 1 1000 >&2; printf end`, { timeoutMs: 0 });
    const expected = `${Array.from({ length: lines }, (_, i) => i + 1).join("\n")}\nend`;
    expect(result.stdout.length).toBe(expected.length);
    expect(result.stdout === expected).toBe(true);
    expect(result.stderr).toBe(`${Array.from({ length: 1000 }, (_, i) => i + 1).join("\n")}\n`);
  });

  test("stdin, background commands, connect and kill", async () => {
    const cat = await sandbox.commands.run("cat", { background: true, stdin: true });
    await cat.sendStdin("piped");
    await cat.closeStdin();
    expect((await cat.wait()).stdout).toBe("piped");

    // long enough that a loaded machine still connects again before it ends
    const late = await sandbox.commands.run("sleep 3; echo late", { background: true });
    await late.disconnect();
    const again = await sandbox.commands.connect(late.pid);
    expect((await again.wait()).stdout).toBe("late\n");

    const sleeper = await sandbox.commands.run("sleep 30", { background: true, user: "nobody", cwd: "/tmp" });
    expect(await sandbox.commands.kill(sleeper.pid)).toBe(true);
    await expect(sleeper.wait()).rejects.toMatchObject({ exitCode: -1, error: "signal: killed" });
    expect(await sandbox.commands.kill(sleeper.pid)).toBe(false);
  });

  test("timeoutMs kills the command", async () => {
    const started = Date.now();
    const run = sandbox.commands.run("sleep 30", { timeoutMs: 500, user: "nobody", cwd: "/tmp" });
    await expect(run).rejects.toBeInstanceOf(TimeoutError);
    expect(Date.now() - started).toBeLessThan(10_000);
  });

  test("pty.create, sendInput, resize", async () => {
    const out: Uint8Array[] = [];
    const text = () => Buffer.concat(out).toString("utf8");
    const terminal = await sandbox.pty.create({
      cols: 80,
      rows: 24,
      cwd: dir,
      onData: (d) => void out.push(d),
    });
    await sandbox.pty.resize(terminal.pid, { cols: 120, rows: 40 });
    await sandbox.pty.sendInput(terminal.pid, bytes("stty size; exit\n"));
    const result = await terminal.wait();
    expect(result.exitCode).toBe(0);
    expect(text()).toContain("40 120");
  });
});
