import { access, mkdir, readdir, readFile, rm, rmdir } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { CommandError, command, requireBinary } from "../lib/command.js";
import { spawner } from "../lib/spawner.js";
import type {
  ContainerRef,
  ContainerRuntime,
  ContainerState,
  RestoreOptions,
  RunOptions,
  RuntimeOptions,
} from "./container-runtime.js";
import { startDetached } from "./start-detached.js";

/**
 * Debian's runsc refuses a networked sandbox when it believes it runs in the root netns, and it
 * decides that by reading /proc/sys/net/core/rmem_default, which newer kernels show in every
 * netns. A private mount namespace with a tmpfs over /proc/sys/net hides the probe; nsenter then
 * joins the sandbox's netns, where runsc's abstract control socket lives, so every command for
 * a sandbox goes through this wrapper. Arguments: $1 netns path, the rest the runsc argv.
 */
/** The file runsc writes into a checkpoint's image directory. */
export const CHECKPOINT_IMAGE = "checkpoint.img";

const NETNS_WRAPPER =
  'mount -t tmpfs none /proc/sys/net && ns="$1" && shift && exec nsenter --net="$ns" "$@"';

/**
 * How long a new gVisor sandbox's clock takes to calibrate. Until then its vDSO cannot answer,
 * so every clock read of its processes is a system call: ~70 µs each here under ptrace, where
 * the vDSO takes 40 ns (measured: the switch came 0.9 s after boot). Node reads the clock at
 * every turn of its loop, so envd's start and warm-up took ~0.9 s of CPU in a sandbox booted at
 * once and ~0.47 s in one whose envd started after 1.1 s.
 */
const CLOCK_CALIBRATION_MS = 1_000;

/**
 * runsc (gVisor): a user-space kernel between the workload and the host, bookworm-backports'
 * 2024 build or bookworm's 2022 one (scripts/setup.sh). Uses the ptrace platform: KVM guests
 * stall on these hosts, and the 2024 build's systrap is 1.4-2.3× slower than ptrace at creating
 * processes on a 2-vCPU host (it wins at file-heavy work). Its own network stack runs on the
 * netns's veth. --overlay2=none makes writes land in our overlay's upper directory instead of a
 * gVisor-internal layer, so files survive stop, checkpoint and snapshot.
 */
export class RunscRuntime implements ContainerRuntime {
  readonly name = "runsc";
  private readonly root: string;
  private readonly logDir: string;
  private checkpointFlagsOnce: Promise<string[]> | undefined;

  constructor(
    private readonly bin: string,
    opts: RuntimeOptions,
  ) {
    this.root = join(opts.stateDir, "root");
    this.logDir = join(opts.stateDir, "logs");
  }

  async run(c: ContainerRef, opts: RunOptions): Promise<void> {
    const { patience } = opts;
    if (!patience || patience.aborted) {
      await this.start(c, ["run", "--detach", "--bundle", opts.bundleDir, c.id], opts.consoleLog);
      return;
    }
    // the sandbox's kernel first, its init once that kernel's clock is calibrated (or at once,
    // when someone comes to wait for it)
    await this.start(c, ["create", "--bundle", opts.bundleDir, c.id], opts.consoleLog);
    await sleep(CLOCK_CALIBRATION_MS, undefined, { signal: patience }).catch(() => undefined);
    await this.runsc(c, ["start", c.id]);
  }

  async restore(c: ContainerRef, opts: RestoreOptions): Promise<void> {
    const args = ["restore", "--detach", "--bundle", opts.bundleDir, "--image-path", opts.imageDir, c.id];
    try {
      await this.start(c, args, opts.consoleLog);
    } catch (err) {
      // the record a checkpoint leaves behind blocks a container of the same id (normally
      // deleted right after the checkpoint; not when the platform restarted in between)
      if (!/already exists/i.test(String(err))) throw err;
      await this.delete(c);
      await this.start(c, args, opts.consoleLog);
    }
  }

  /**
   * gVisor refuses while a TCP connection is open ("endpoint cannot be saved in connected
   * state"), and the 2022 build also while any socket listens ("endpoint still has waiters upon
   * save"): envd closes its own connections and listener first, on a signal.
   */
  async checkpoint(c: ContainerRef, imageDir: string): Promise<void> {
    await mkdir(imageDir, { recursive: true });
    // runsc will not overwrite an image, and a failed attempt leaves an empty one behind
    await rm(join(imageDir, CHECKPOINT_IMAGE), { force: true });
    await this.runsc(c, ["checkpoint", ...(await this.checkpointFlags()), "--image-path", imageDir, c.id]);
  }

  /**
   * The image is written uncompressed and without the pages that are only zeros, where this
   * runsc has the flags (its usage is asked once). Measured on a pooled sandbox:
   * checkpoint 152-180 → 76-89 ms, restore 248-291 → 194-209 ms, an image of 17 MB. The
   * default compression spent the difference compressing and expanding envd's heap.
   */
  private checkpointFlags(): Promise<string[]> {
    this.checkpointFlagsOnce ??= spawner
      .run({ file: this.bin, args: ["checkpoint", "--help"], timeoutMs: 10_000 })
      .then(({ stdout, stderr }) => {
        const usage = stdout + stderr;
        return [
          ...(usage.includes("-compression") ? ["--compression", "none"] : []),
          ...(usage.includes("-exclude-committed-zero-pages") ? ["--exclude-committed-zero-pages"] : []),
        ];
      });
    return this.checkpointFlagsOnce;
  }

  /** After a checkpoint: what is left of the container goes at once (see `forget`). */
  async forgetCheckpointed(c: ContainerRef): Promise<void> {
    await this.forget(c);
  }

  /**
   * What `runsc delete --force` does, without its wait: the sandbox takes 1.5–2 s to tear down
   * its ptrace stubs, and a delete (a kill through the API, a restore of the same id) would wait
   * for that. So its processes (sentry, gofer) are killed, then its cgroups (empty by then) and
   * its record go. Anything unexpected falls back to `runsc delete`.
   */
  private async forget(c: ContainerRef): Promise<void> {
    const prefix = `${c.id}_sandbox:`;
    const files = (await readdir(this.root).catch(() => [] as string[])).filter((f) => f.startsWith(prefix));
    const stateFile = files.find((f) => f.endsWith(".state"));
    if (!stateFile) return;
    const state = JSON.parse(await readFile(join(this.root, stateFile), "utf8")) as RunscStateFile;
    if (state.status === "paused") return this.deleteByRunsc(c);
    const cgroup = state.sandbox?.cgroup?.cgroupv1;
    if (!cgroup?.name) return this.deleteByRunsc(c);
    for (const pid of [state.sandbox?.pid, state.goferPid]) {
      if (typeof pid === "number" && pid > 0) signal(pid, "SIGKILL");
    }
    const procs = join("/sys/fs/cgroup", "pids", cgroup.name, "cgroup.procs");
    const deadline = Date.now() + 2000;
    while ((await readFile(procs, "utf8").catch(() => "")).trim() !== "") {
      if (Date.now() > deadline) return this.deleteByRunsc(c);
      await new Promise((r) => setTimeout(r, 5));
    }
    for (const [controller, own] of Object.entries(cgroup.own ?? {})) {
      if (own) await rmdir(join("/sys/fs/cgroup", controller, cgroup.name)).catch(() => undefined);
    }
    for (const file of files) await rm(join(this.root, file), { force: true });
    // newer runsc (bookworm-backports' 2024 build) also keeps a control socket here
    await rm(join(this.root, `runsc-${c.id}.sock`), { force: true });
  }

  async state(c: ContainerRef): Promise<ContainerState | undefined> {
    try {
      const s = JSON.parse(await this.runsc(c, ["state", c.id])) as ContainerState & { pid: number };
      return { id: s.id, status: s.status, bundle: s.bundle, ...(s.pid > 0 ? { pid: s.pid } : {}) };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async pause(c: ContainerRef): Promise<void> {
    await this.runsc(c, ["pause", c.id]);
  }

  async resume(c: ContainerRef): Promise<void> {
    await this.runsc(c, ["resume", c.id]);
  }

  async kill(c: ContainerRef, signal: NodeJS.Signals, opts: { all?: boolean } = {}): Promise<void> {
    await this.runsc(c, ["kill", ...(opts.all ? ["--all"] : []), c.id, signal]);
  }

  async delete(c: ContainerRef): Promise<void> {
    await this.forget(c);
    await rm(this.logFile(c.id), { force: true });
  }

  /** `runsc delete --force`, the slow and sure way. */
  private async deleteByRunsc(c: ContainerRef): Promise<void> {
    try {
      // runsc panics deleting a paused sandbox ("invalid state transition: paused => stopped")
      if ((await this.state(c).catch(() => undefined))?.status === "paused") await this.resume(c);
      await this.runsc(c, ["delete", "--force", c.id]);
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
  }

  async list(): Promise<string[]> {
    // reads state files only, so it needs no netns; statuses would be wrong outside it
    const out = await command(this.bin, ["--root", this.root, "list", "--quiet"]);
    return out.split("\n").filter(Boolean);
  }

  private async start(c: ContainerRef, args: string[], consoleLog: string): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await mkdir(this.logDir, { recursive: true });
    const argv = await this.argv(c, args);
    await startDetached(argv[0]!, argv.slice(1), consoleLog, this.logFile(c.id));
  }

  private async runsc(c: ContainerRef, args: string[]): Promise<string> {
    const argv = await this.argv(c, args);
    return command(argv[0]!, argv.slice(1));
  }

  /** The full argv for a runsc command about `c`, wrapped into its netns while that exists. */
  private async argv(c: ContainerRef, args: string[]): Promise<string[]> {
    const runsc = [
      this.bin,
      "--root",
      this.root,
      "--log",
      this.logFile(c.id),
      "--platform",
      "ptrace",
      "--network",
      "sandbox",
      "--overlay2",
      "none",
      ...args,
    ];
    // a netns already torn down cannot be joined; runsc still deletes by killing the sandbox pid
    if (!(await exists(c.netnsPath))) return runsc;
    return [
      "unshare",
      "--mount",
      "--propagation",
      "private",
      "sh",
      "-c",
      NETNS_WRAPPER,
      "sh",
      c.netnsPath,
      ...runsc,
    ];
  }

  private logFile(id: string): string {
    return join(this.logDir, `${id}.log`);
  }
}

export async function createRunscRuntime(opts: RuntimeOptions): Promise<RunscRuntime> {
  const bin = await requireBinary("runsc", "apt-get install runsc");
  await requireBinary("nsenter", "apt-get install util-linux");
  return new RunscRuntime(bin, opts);
}

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

function isMissing(err: unknown): boolean {
  return err instanceof CommandError && /does not exist|file does not exist/i.test(err.stderr);
}

/** The parts of runsc's record of a container (`<root>/<id>_sandbox:<id>.state`) used here. */
interface RunscStateFile {
  status?: string;
  goferPid?: number;
  sandbox?: { pid?: number; cgroup?: { cgroupv1?: { name?: string; own?: Record<string, boolean> } } };
}

/** Sends a signal; a process that is already gone is fine. */
function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // exited already
  }
}
