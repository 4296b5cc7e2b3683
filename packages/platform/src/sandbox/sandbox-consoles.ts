import { readdir } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../lib/log.js";
import { archiveConsoleLog, ConsoleLogKeeper } from "./console-log.js";
import type { BootSpec, SandboxPaths } from "./sandbox-spec.js";

const NETNS_DIR = "/run/netns";

/**
 * Where each sandbox's console log is, and the keeper that trims the running ones: a sandbox
 * with a disk of its own writes its log there (its quota, not the host's); what is kept of
 * earlier runs, and a build's log, are on the data dir (see console-log.ts).
 */
export class SandboxConsoles {
  private readonly keeper: ConsoleLogKeeper;

  constructor(
    private readonly o: {
      maxBytes: number;
      paths(id: string): SandboxPaths;
      /** The netns name prefix of this platform's sandboxes: those whose container may run. */
      netnsPrefix: string;
      log: Logger;
    },
  ) {
    this.keeper = new ConsoleLogKeeper({ maxBytes: o.maxBytes, files: () => this.running(), log: o.log });
  }

  /** Keeps the logs of this host's running sandboxes trimmed, adopted ones included, until close(). */
  watch(): void {
    this.keeper.start();
    void this.keeper.sweep();
  }

  close(): void {
    this.keeper.close();
  }

  /** Where a sandbox's console log is while it runs: on its own disk when it has one. */
  runningLog(spec: Pick<BootSpec, "id" | "diskSizeMB">): string {
    const p = this.o.paths(spec.id);
    return spec.diskSizeMB === undefined ? p.consoleLog : path.join(p.disk.mountPoint, "console.log");
  }

  /** A sandbox's console logs, oldest first: what is kept of earlier runs, then the running one's. */
  logs(id: string): string[] {
    const p = this.o.paths(id);
    return [p.consoleLog, path.join(p.disk.mountPoint, "console.log")];
  }

  /** A log a container was just started with, trimmed from now on. */
  started(file: string): void {
    this.keeper.keep(file);
  }

  /** The sandbox is gone: its logs are no longer trimmed. */
  forget(id: string): void {
    for (const file of this.logs(id)) this.keeper.forget(file);
  }

  /** Before a sandbox's disk goes: its running log's newest part joins the kept one on the data dir. */
  async keep(id: string): Promise<void> {
    const [kept, running] = this.logs(id) as [string, string];
    this.forget(id);
    await archiveConsoleLog(running, kept, this.o.maxBytes).catch((err: unknown) =>
      this.o.log.warn({ sandboxId: id, err }, "could not keep the console log of a stopped sandbox"),
    );
  }

  /** The console logs of the sandboxes with a network of this platform's. */
  private async running(): Promise<string[]> {
    const prefix = this.o.netnsPrefix;
    const names = await readdir(NETNS_DIR).catch(() => [] as string[]);
    return names.filter((n) => n.startsWith(prefix)).flatMap((n) => this.logs(n.slice(prefix.length)));
  }
}
