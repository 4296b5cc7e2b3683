/**
 * A PostgreSQL cluster of a test's own (initdb in a scratch directory, its own port), for
 * drills that stop and start the database without touching the machine's cluster, which other
 * suites use at the same time.
 */
import { execFileSync } from "node:child_process";
import { chownSync, existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import path from "node:path";
import { freePort } from "./free-port.js";

/** Where scratch clusters live (swept before a run: see the global set-up). */
export const SCRATCH_PG_PREFIX = "/var/tmp/x-pg-drill-";

function pgBin(): string {
  return path.join("/usr/lib/postgresql", readdirSync("/usr/lib/postgresql").sort().at(-1)!, "bin");
}

/** Runs a PostgreSQL program as the postgres account (it refuses root). */
function asPostgres(program: string, args: string[]): string {
  const quoted = [path.join(pgBin(), program), ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  return execFileSync("su", ["postgres", "-s", "/bin/sh", "-c", quoted], { encoding: "utf8", stdio: "pipe" });
}

/** Stops a scratch cluster at once, if it runs, and removes it. */
export function removeScratchPostgres(dir: string): void {
  const data = path.join(dir, "data");
  if (existsSync(path.join(data, "postmaster.pid"))) {
    try {
      asPostgres("pg_ctl", ["-D", data, "-w", "-m", "immediate", "stop"]);
    } catch (err) {
      process.stderr.write(`cleanup: pg_ctl stop ${dir}: ${err}\n`);
    }
  }
  rmSync(dir, { recursive: true, force: true });
}

export class ScratchPostgres {
  readonly dir = mkdtempSync(SCRATCH_PG_PREFIX);
  private readonly data = path.join(this.dir, "data");
  port = 0;

  get url(): string {
    return `postgres://postgres@127.0.0.1:${this.port}/postgres`;
  }

  private ctl(...args: string[]): void {
    asPostgres("pg_ctl", ["-D", this.data, "-w", "-t", "30", ...args]);
  }

  async init(): Promise<void> {
    chownSync(this.dir, Number(execFileSync("id", ["-u", "postgres"], { encoding: "utf8" })), 0);
    asPostgres("initdb", ["-D", this.data, "-A", "trust", "-U", "postgres", "--no-sync"]);
    this.port = await freePort();
    this.start();
  }

  /** Starts the server; its output goes to a log file (a pipe would hold the caller). */
  start(): void {
    const options = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    this.ctl("-o", options, "-l", path.join(this.dir, "log"), "start");
  }

  stop(): void {
    this.ctl("-m", "fast", "stop");
  }

  remove(): void {
    removeScratchPostgres(this.dir);
  }
}
