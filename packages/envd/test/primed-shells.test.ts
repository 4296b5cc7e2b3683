/**
 * The e2b client runs commands as `/bin/bash -l -c CMD`; envd keeps a login shell of the
 * default user primed so that a command does not wait for bash and its profile. A command run
 * in a primed shell must be indistinguishable from one run the plain way: output, exit code,
 * environment, working directory, stdin, and the settings `/init` changes.
 */
import { readFileSync, readlinkSync } from "node:fs";
import { type RunningEnvd, startEnvd } from "./helpers/envd-process.js";

let envd: RunningEnvd;

beforeAll(async () => {
  // nobody: this host's root profile is slow; the sandbox's default user is not root either
  envd = await startEnvd({ defaultUser: "nobody" });
});

afterAll(async () => {
  await envd?.stop();
});

interface Ran {
  pid: number;
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** As `commands.run` sends it: `/bin/bash -l -c cmd`, no envs, no stdin. */
async function loginShell(cmd: string, opts: { stdin?: Uint8Array; cwd?: string } = {}): Promise<Ran> {
  const out = { pid: 0, stdout: "", stderr: "", exitCode: -2 };
  const stream = envd.client.process.start({
    process: { cmd: "/bin/bash", args: ["-l", "-c", cmd], envs: {}, cwd: opts.cwd },
    stdin: opts.stdin !== undefined,
  });
  for await (const message of stream) {
    const event = message.event?.event;
    if (event?.case === "start") {
      out.pid = event.value.pid;
      if (opts.stdin) {
        await envd.client.process.sendInput({
          process: { selector: { case: "pid", value: out.pid } },
          input: { input: { case: "stdin", value: opts.stdin } },
        });
        await envd.client.process.closeStdin({ process: { selector: { case: "pid", value: out.pid } } });
      }
    }
    if (event?.case === "data") {
      const { output } = event.value;
      if (output.case === "stdout") out.stdout += Buffer.from(output.value).toString();
      if (output.case === "stderr") out.stderr += Buffer.from(output.value).toString();
    }
    if (event?.case === "end") out.exitCode = event.value.exitCode;
  }
  return out;
}

/** envd's children waiting as primed shells (their command line holds the primer). */
function primedShells(): number[] {
  const children = readFileSync(`/proc/${envd.child.pid}/task/${envd.child.pid}/children`, "utf8")
    .trim()
    .split(/\s+/)
    .filter(Boolean)
    .map(Number);
  return children.filter((pid) => {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("__x_cmd");
    } catch {
      return false;
    }
  });
}

async function waitForPrimed(): Promise<number> {
  const deadline = Date.now() + 5000;
  for (;;) {
    const [pid] = primedShells();
    if (pid) return pid;
    if (Date.now() > deadline) throw new Error("no shell was primed");
    await new Promise((r) => setTimeout(r, 20));
  }
}

test("a command runs in the primed shell, as the plain way would run it", async () => {
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  const plain = await loginShell('echo "$0|$#|$USER|$HOME|$(pwd)|${__x_cmd-unset}"; exit 3');
  expect(plain).toMatchObject({ stdout: "/bin/bash|0|nobody|/nonexistent|/|unset\n", exitCode: 3 });
  const primed = await waitForPrimed();
  // biome-ignore lint/suspicious/noTemplateCurlyInString: shell parameter expansion, not a template
  const again = await loginShell('echo "$0|$#|$USER|$HOME|$(pwd)|${__x_cmd-unset}"; exit 3');
  expect(again).toMatchObject({ pid: primed, stdout: plain.stdout, exitCode: 3 });
  // a fresh one waits for the next command, in its own session, as nobody
  const next = await waitForPrimed();
  expect(next).not.toBe(primed);
  expect(readFileSync(`/proc/${next}/status`, "utf8")).toMatch(/^Uid:\s+65534\s/m);
});

test("stdin, stderr, signals' exit codes and a quoted command survive the primer", async () => {
  await waitForPrimed();
  const cat = await loginShell("cat; echo done >&2", { stdin: new TextEncoder().encode("piped\n") });
  expect(cat).toMatchObject({ stdout: "piped\n", stderr: "done\n", exitCode: 0 });
  await waitForPrimed();
  const quoted = await loginShell(`printf '%s\\n' "a'b" 'c"d' \\$HOME; sh -c 'kill -9 $$'; echo $?`);
  expect(quoted).toMatchObject({ stdout: `a'b\nc"d\n$HOME\n137\n`, exitCode: 0 });
});

test("a command for another directory or after /init gets the new settings", async () => {
  await waitForPrimed();
  expect((await loginShell("pwd", { cwd: "/tmp" })).stdout).toBe("/tmp\n");
  const before = await waitForPrimed();
  const res = await fetch(`${envd.url}/init`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ envVars: { X_PRIMED_TEST: "after init" } }),
  });
  expect(res.status).toBe(204);
  expect((await loginShell('echo "$X_PRIMED_TEST"')).stdout).toBe("after init\n");
  // the shell primed before /init is gone, not used
  const gone = (() => {
    try {
      return readlinkSync(`/proc/${before}/exe`) === "";
    } catch {
      return true;
    }
  })();
  expect(gone).toBe(true);
});
