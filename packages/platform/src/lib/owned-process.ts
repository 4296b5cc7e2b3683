import { type ChildProcess, type SpawnOptions, spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "./log.js";

/**
 * Long-running helpers the platform starts itself (the firewall's trace reader, tar streams,
 * debootstrap) must end with it, however it ends. Two guards:
 * - the kernel's parent-death signal (`setpriv --pdeathsig`): the child is killed the moment
 *   the platform process dies, SIGKILL included;
 * - a record per child under the data directory, so the next start (or `x cleanup`) ends any
 *   that slipped through (the child's start time tells a recycled pid apart).
 */

const SETPRIV = ["/usr/bin/setpriv", "/bin/setpriv"].find((file) => existsSync(file));

/** Spawns `file` so that it dies with this process (see above); recorded in `records` when given. */
export function spawnOwned(
  file: string,
  args: readonly string[],
  options: SpawnOptions,
  records?: ChildRecords,
): ChildProcess {
  const child = SETPRIV
    ? spawn(SETPRIV, ["--pdeathsig", "SIGKILL", "--", file, ...args], options)
    : spawn(file, args, options);
  if (records && child.pid !== undefined) records.add(child, [file, ...args]);
  return child;
}

/**
 * The start time of a running process (clock ticks since boot), which a recycled pid does not
 * share; undefined when there is none, or only its zombie (it ended, its parent has not
 * reaped it yet).
 */
export function processStartTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    // the command name (field 2) may hold spaces and parentheses: fields count from its end
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    if (fields[0] === "Z" || fields[0] === "X") return undefined;
    return fields[19];
  } catch {
    return undefined;
  }
}

interface ChildRecord {
  pid: number;
  startTime: string;
  argv: string[];
}

/** Records of the children a platform started, one file each, in a directory of its own. */
export class ChildRecords {
  constructor(
    private readonly dir: string,
    private readonly log: Logger,
  ) {}

  add(child: ChildProcess, argv: string[]): void {
    const pid = child.pid!;
    const startTime = processStartTime(pid);
    if (startTime === undefined) return; // gone already
    const file = path.join(this.dir, `${pid}.json`);
    const record: ChildRecord = { pid, startTime, argv };
    const written = mkdir(this.dir, { recursive: true })
      .then(() => writeFile(file, JSON.stringify(record)))
      .catch((err: unknown) => this.log.warn({ err, file }, "could not record a child process"));
    child.once("exit", () => void written.then(() => rm(file, { force: true })));
  }

  /** Ends the recorded children still running (a platform that was killed left them); returns their pids. */
  async endLeftovers(): Promise<number[]> {
    const ended: number[] = [];
    for (const name of await readdir(this.dir).catch(() => [] as string[])) {
      const file = path.join(this.dir, name);
      try {
        const record = JSON.parse(await readFile(file, "utf8")) as ChildRecord;
        if (processStartTime(record.pid) === record.startTime) {
          process.kill(record.pid, "SIGKILL");
          ended.push(record.pid);
          this.log.info({ pid: record.pid, argv: record.argv }, "ended a process a previous run left");
        }
      } catch (err) {
        this.log.warn({ err, file }, "could not read a child process record");
      }
      await rm(file, { force: true });
    }
    return ended;
  }
}
