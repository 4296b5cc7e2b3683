import { type ChildProcess, spawn } from "node:child_process";

/**
 * Host commands (ip, nft, runc, runsc, mount, cp…) are started by a small helper process rather
 * than by the platform itself. fork() copies the page tables of the process that spawns, and
 * libuv's spawn blocks that process's event loop until the child has exec'd: measured here,
 * 1.5 ms per spawn at 170 MB RSS, 6.5 ms at 490 MB and 20 ms at 1.2 GB, while the API and the
 * proxy answer nobody. A boot spawns about ten commands, so under a burst of creates the proxy
 * stalled for seconds. The helper stays at a few tens of MB: its forks are cheap and block only
 * it. It exits when the platform goes (its IPC channel closes); containers it started live on.
 */

/** One command for the helper. */
export interface SpawnRequest {
  file: string;
  args: readonly string[];
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Written to stdin, then stdin is closed. */
  input?: string;
  timeoutMs?: number;
  /** stdout and stderr appended to this file instead of captured (detached containers). */
  outputFile?: string;
  /**
   * The most of stdout, and of stderr, kept (64 MiB by default, for the host's own tools);
   * past it the command is killed and fails. Lower for what a tenant's image or archive decides.
   */
  maxOutputBytes?: number;
}

/** How it ended: `code` is the exit code, or the signal's name, or an errno code when it could not start. */
export interface SpawnResult {
  code: number | string | null;
  stdout: string;
  stderr: string;
  /** Set when the command could not be started or was killed on its timeout. */
  error?: string;
}

/** The helper, run with `node -e` so it needs no file of its own in any build or bundle. */
const HELPER_SOURCE = `
"use strict";
const { execFile, spawn } = require("node:child_process");
const { openSync, closeSync } = require("node:fs");
const reply = (id, result) => process.connected && process.send({ id, ...result });
process.on("disconnect", () => process.exit(0));
process.on("message", ({ id, req }) => {
  try {
    if (req.outputFile !== undefined) {
      const fd = openSync(req.outputFile, "a");
      // stdin is a pipe closed at once, never /dev/null: runsc chowns its standard streams
      const child = spawn(req.file, req.args, { stdio: ["pipe", fd, fd], env: req.env, cwd: req.cwd });
      closeSync(fd);
      child.stdin.on("error", () => undefined);
      child.stdin.end();
      child.on("error", (err) => reply(id, { code: err.code ?? null, stdout: "", stderr: "", error: err.message }));
      child.on("close", (code, signal) => reply(id, { code: code ?? signal, stdout: "", stderr: "" }));
      return;
    }
    const child = execFile(
      req.file,
      req.args,
      { encoding: "utf8", maxBuffer: req.maxOutputBytes ?? 64 * 1024 * 1024, timeout: req.timeoutMs, env: req.env, cwd: req.cwd },
      (err, stdout, stderr) => {
        if (!err) return reply(id, { code: 0, stdout, stderr });
        const code = typeof err.code === "number" ? err.code : (err.signal ?? err.code ?? null);
        const error = err.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER"
          ? "its output was longer than the " + (req.maxOutputBytes ?? 64 * 1024 * 1024) + " bytes the platform reads"
          : err.killed ? "timed out" : err.message;
        reply(id, { code, stdout, stderr: code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER" ? error : stderr, error });
      },
    );
    child.stdin.on("error", () => undefined);
    child.stdin.end(req.input);
  } catch (err) {
    reply(id, { code: null, stdout: "", stderr: "", error: String(err && err.message || err) });
  }
});
`;

/** Runs host commands through the helper process, starting it on first use and again after it dies. */
export class Spawner {
  private child: ChildProcess | undefined;
  private nextId = 1;
  private readonly pending = new Map<
    number,
    { child: ChildProcess; resolve: (result: SpawnResult) => void }
  >();

  run(req: SpawnRequest): Promise<SpawnResult> {
    const child = this.helper();
    const id = this.nextId++;
    return new Promise<SpawnResult>((resolve) => {
      this.pending.set(id, { child, resolve });
      // the channel keeps this process alive only while a command is running
      if (this.pending.size === 1) child.channel?.ref();
      child.send({ id, req: { ...req, env: req.env ?? process.env } });
    });
  }

  /** The helper's process id, while it runs. */
  get pid(): number | undefined {
    return this.child?.connected ? this.child.pid : undefined;
  }

  /** Ends the helper (commands running in it go on; their results are lost). */
  close(): void {
    this.child?.disconnect();
    this.child = undefined;
  }

  private helper(): ChildProcess {
    if (this.child?.connected) return this.child;
    const child = spawn(process.execPath, ["-e", HELPER_SOURCE], {
      stdio: ["ignore", "inherit", "inherit", "ipc"],
      serialization: "json",
    });
    child.on("message", (msg: { id: number } & SpawnResult) => {
      const entry = this.pending.get(msg.id);
      if (!entry) return;
      this.pending.delete(msg.id);
      if (this.pending.size === 0) child.channel?.unref();
      entry.resolve(msg);
    });
    // a helper that dies takes its commands' results along: they fail, the next one starts anew
    child.on("exit", (code, signal) => {
      if (this.child === child) this.child = undefined;
      for (const [id, entry] of this.pending) {
        if (entry.child !== child) continue;
        this.pending.delete(id);
        entry.resolve({
          code: null,
          stdout: "",
          stderr: "",
          error: `the command helper exited (${code ?? signal})`,
        });
      }
    });
    child.unref();
    child.channel?.unref();
    this.child = child;
    return child;
  }
}

/** The platform's one helper. */
export const spawner = new Spawner();
