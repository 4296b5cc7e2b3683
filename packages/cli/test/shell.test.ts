/**
 * `x sandbox shell` driven as a person would: the built x runs in a tmux pane, keys are typed
 * with send-keys and the screen read with capture-pane; the window is resized and the shell
 * left with `exit`.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startTestPlatform, type TestPlatform } from "../../platform/test/helpers/platform.js";
import { CONNECTION_ENV, ensureBuilt, X_BIN, xJson } from "./run-x.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let t: TestPlatform;
const saved = { ...process.env };
const socket = `x-cli-shell-${process.pid}`;
const tmux = (...args: string[]) =>
  execFileSync("tmux", ["-L", socket, ...args], { encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** Waits until the pane shows `pattern`, failing with what it shows otherwise. */
async function screenShows(pattern: RegExp, timeoutMs = 30_000): Promise<string> {
  const until = Date.now() + timeoutMs;
  let screen = "";
  while (Date.now() < until) {
    screen = tmux("capture-pane", "-p", "-t", "shell");
    if (pattern.test(screen)) return screen;
    await sleep(200);
  }
  throw new Error(`the pane never showed ${pattern}; it shows:\n${screen}`);
}

function sessionAlive(): boolean {
  try {
    tmux("has-session", "-t", "shell");
    return true;
  } catch {
    return false;
  }
}

beforeAll(async () => {
  ensureBuilt();
  for (const name of CONNECTION_ENV) delete process.env[name];
  t = await startTestPlatform({ runtime: "runc" });
  process.env.X_API_URL = t.apiUrl;
  process.env.X_PROXY_URL = t.proxyUrl;
  process.env.X_API_KEY = t.apiKey;
});

afterAll(async () => {
  await t?.stop();
  process.env = saved;
});

it("opens a terminal that types, resizes, exits with the shell and restores the local TTY", async () => {
  const { sandboxID } = await xJson<{ sandboxID: string }>(["sandbox", "create", "--timeout", "300"]);
  const out = mkdtempSync(path.join(os.tmpdir(), "x-cli-shell-"));
  try {
    // after x: its exit code and the local terminal's settings, to check it left cooked mode
    const script = `'${process.execPath}' '${X_BIN}' sandbox shell ${sandboxID}; echo $? > ${out}/code; stty -a > ${out}/stty`;
    tmux(
      "new-session",
      "-d",
      "-s",
      "shell",
      "-x",
      "120",
      "-y",
      "40",
      "-e",
      `X_API_URL=${t.apiUrl}`,
      "-e",
      `X_PROXY_URL=${t.proxyUrl}`,
      "-e",
      `X_API_KEY=${t.apiKey}`,
      script,
    );
    await screenShows(/user@.*\$ ?$/m);
    tmux("send-keys", "-t", "shell", "echo hi-$((6*7))", "Enter");
    await screenShows(/^hi-42$/m);

    tmux("send-keys", "-t", "shell", "stty size", "Enter");
    await screenShows(/^40 120$/m);
    tmux("resize-window", "-t", "shell", "-x", "100", "-y", "30");
    await sleep(500);
    tmux("send-keys", "-t", "shell", "clear; stty size", "Enter");
    await screenShows(/^30 100$/m);

    tmux("send-keys", "-t", "shell", "exit 3", "Enter");
    const until = Date.now() + 30_000;
    while (sessionAlive() && Date.now() < until) await sleep(200);
    expect(sessionAlive()).toBe(false);
    expect(readFileSync(path.join(out, "code"), "utf8")).toBe("3\n");
    // raw mode is undone: the line discipline echoes and edits lines again
    const stty = readFileSync(path.join(out, "stty"), "utf8");
    expect(stty).toMatch(/(^|\s)icanon(\s|$)/);
    expect(stty).toMatch(/(^|\s)echo(\s|$)/);
  } finally {
    try {
      tmux("kill-server");
    } catch {
      // the server ends by itself with its last session
    }
    // tmux leaves its socket file behind
    rmSync(path.join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${process.getuid?.()}`, socket), {
      force: true,
    });
    rmSync(out, { recursive: true, force: true });
    await xJson(["sandbox", "kill", sandboxID]).catch(() => undefined);
  }
});
