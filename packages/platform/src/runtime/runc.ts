import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { CommandError, command, requireBinary } from "../lib/command.js";
import type {
  ContainerRef,
  ContainerRuntime,
  ContainerState,
  RunOptions,
  RuntimeOptions,
} from "./container-runtime.js";
import { startDetached } from "./start-detached.js";

/**
 * runc: containers share the host kernel; fast to start and freeze. No checkpoint here: it
 * needs CRIU, which fails on these kernels, so pause under runc is freeze or stop.
 */
export class RuncRuntime implements ContainerRuntime {
  readonly name = "runc";
  private readonly root: string;
  private readonly logDir: string;

  constructor(
    private readonly bin: string,
    opts: RuntimeOptions,
  ) {
    this.root = join(opts.stateDir, "root");
    this.logDir = join(opts.stateDir, "logs");
  }

  async run(c: ContainerRef, opts: RunOptions): Promise<void> {
    await mkdir(this.root, { recursive: true });
    await mkdir(this.logDir, { recursive: true });
    const log = this.logFile(c.id);
    await startDetached(
      this.bin,
      ["--root", this.root, "--log", log, "run", "--detach", "--bundle", opts.bundleDir, c.id],
      opts.consoleLog,
      log,
    );
  }

  async state(c: ContainerRef): Promise<ContainerState | undefined> {
    try {
      const s = JSON.parse(await this.runc(["state", c.id])) as ContainerState & { pid: number };
      return { id: s.id, status: s.status, bundle: s.bundle, ...(s.pid > 0 ? { pid: s.pid } : {}) };
    } catch (err) {
      if (isMissing(err)) return undefined;
      throw err;
    }
  }

  async pause(c: ContainerRef): Promise<void> {
    await this.runc(["pause", c.id]);
  }

  async resume(c: ContainerRef): Promise<void> {
    await this.runc(["resume", c.id]);
  }

  async kill(c: ContainerRef, signal: NodeJS.Signals, opts: { all?: boolean } = {}): Promise<void> {
    await this.runc(["kill", ...(opts.all ? ["--all"] : []), c.id, signal]);
  }

  async delete(c: ContainerRef): Promise<void> {
    try {
      await this.runc(["delete", "--force", c.id]);
    } catch (err) {
      if (!isMissing(err)) throw err;
    }
    await rm(this.logFile(c.id), { force: true });
  }

  async list(): Promise<string[]> {
    const out = JSON.parse(await this.runc(["list", "--format", "json"])) as Array<{ id: string }> | null;
    return (out ?? []).map((x) => x.id);
  }

  private runc(args: string[]): Promise<string> {
    return command(this.bin, ["--root", this.root, ...args]);
  }

  private logFile(id: string): string {
    return join(this.logDir, `${id}.log`);
  }
}

export async function createRuncRuntime(opts: RuntimeOptions): Promise<RuncRuntime> {
  return new RuncRuntime(await requireBinary("runc", "apt-get install runc"), opts);
}

function isMissing(err: unknown): boolean {
  return err instanceof CommandError && /does not exist/i.test(err.stderr);
}
