import { type ChildProcess, spawn } from "node:child_process";

/**
 * A command to run once the platform process is gone without having stopped cleanly (a SIGKILL,
 * the OOM killer, a crash): its warm-pool members and helpers must not outlive it, and nothing
 * inside a killed process can see to that. A small watcher process holds the command; when its
 * channel to the platform closes without a release first, it starts the command, detached, and
 * exits. A clean stop releases it and it exits quietly.
 */
export interface LastWill {
  argv: readonly string[];
  env?: NodeJS.ProcessEnv;
  /** Where the command's output goes (appended). */
  logFile: string;
}

/** The watcher, run with `node -e` so it needs no file of its own in any build or bundle. */
const GUARDIAN_SOURCE = `
"use strict";
const { spawn } = require("node:child_process");
const { openSync, readFileSync } = require("node:fs");
const parent = process.ppid;
let will;
// the terminal's Ctrl-C reaches the whole process group: the platform stops cleanly and releases us
process.on("SIGINT", () => undefined);
process.on("SIGTERM", () => undefined);
process.on("message", (message) => { will = message.will; });
// the channel closes while the platform is still exiting: the command runs once it has ended
const parentGone = () => {
  try {
    const stat = readFileSync("/proc/" + parent + "/stat", "utf8");
    const state = stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
    return state === "Z" || state === "X";
  } catch {
    return true;
  }
};
const run = () => {
  try {
    const out = openSync(will.logFile, "a");
    spawn(will.argv[0], will.argv.slice(1), { detached: true, stdio: ["ignore", out, out], env: will.env }).unref();
  } catch (err) {
    process.stderr.write("x guardian: could not start " + will.argv.join(" ") + ": " + err.message + "\\n");
  }
  process.exit(0);
};
process.on("disconnect", () => {
  if (!will) process.exit(0);
  const since = Date.now();
  const wait = () => (parentGone() || Date.now() - since > 10000 ? run() : setTimeout(wait, 50));
  wait();
});
`;

export class Guardian {
  private constructor(private readonly child: ChildProcess) {}

  static start(will: LastWill): Guardian {
    const child = spawn(process.execPath, ["-e", GUARDIAN_SOURCE], {
      stdio: ["ignore", "ignore", "inherit", "ipc"],
      serialization: "json",
    });
    child.send({ will: { ...will, env: will.env ?? process.env } });
    // it never keeps the platform's event loop alive
    child.unref();
    child.channel?.unref();
    return new Guardian(child);
  }

  /** The platform stopped cleanly: the command is not run, and the watcher ends. */
  release(): Promise<void> {
    const { child } = this;
    if (!child.connected) return Promise.resolve();
    // waited for: the process stays until the watcher has let go
    child.ref();
    child.channel?.ref();
    return new Promise((resolve) => {
      child.once("exit", () => resolve());
      child.send({ will: null }, () => child.disconnect());
    });
  }
}
