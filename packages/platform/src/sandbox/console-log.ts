import { type FSWatcher, watch } from "node:fs";
import { open, rename, rm, stat, statfs, writeFile } from "node:fs/promises";
import { readFileTail } from "../lib/bounded-read.js";
import { command } from "../lib/command.js";
import type { Logger } from "../lib/log.js";

/**
 * A sandbox's console log: the file its container has as stdout and stderr for its whole life
 * (envd's lines; under runc and gVisor alike, whatever the sandbox's root writes to
 * /proc/1/fd/1). It must stay a file, opened O_APPEND by the command helper: the container
 * outlives the platform (a restarted platform adopts it), and a pipe to the platform would block
 * envd, or end it, while the platform is away.
 *
 * Two bounds keep it small:
 * - The platform trims it: once it holds twice `maxBytes`, all but its newest `maxBytes` go,
 *   checked on every change (inotify) and by a sweep over the running sandboxes. On ext4 and XFS
 *   that is `fallocate --collapse-range` in place: appenders go on at the new end (runc's
 *   processes, through O_APPEND; gVisor's sentry, which appends at the size it reads from the
 *   host). Elsewhere the tail is copied to the start and the file truncated; lines written
 *   meanwhile are lost. After a trim the first line may start mid-line.
 * - A user sandbox's log lives on its own disk (rootfs/disk.ts), beside its upper directory
 *   and out of its sight: between two trims, or while the platform is away, a flood fills the
 *   sandbox's own quota, never the host's disk. (envd drops the lines it cannot write.) A
 *   stopped sandbox's disk is unmounted: the newest `maxBytes` of its log move to the data
 *   dir first (`archiveConsoleLog`), where the logs API reads them.
 * Measured here (runc and gVisor, `head -c 512M /dev/zero >> /proc/1/fd/1` as root): the file
 * stays within a few MiB of the cap throughout.
 */
export const DEFAULT_CONSOLE_LOG_MAX_BYTES = 4 * 1024 * 1024;

/** How often the running sandboxes' logs are looked at, besides each change inotify reports. */
const SWEEP_MS = 2_000;

/**
 * Cuts `file` down to about its newest `keepBytes`: in place where the filesystem can collapse
 * a range (what goes is whole blocks, so up to one block more stays), by copying elsewhere.
 * Resolves how, or "kept" when it was small enough.
 */
export async function trimToNewest(
  file: string,
  keepBytes: number,
): Promise<"collapsed" | "copied" | "kept"> {
  const { size } = await stat(file);
  if (size <= keepBytes) return "kept";
  const { bsize } = await statfs(file);
  const length = Math.floor((size - keepBytes) / bsize) * bsize;
  // the range must end before the end of the file, which only grows meanwhile
  if (length > 0) {
    const collapsed = await command("fallocate", [
      "--collapse-range",
      "--offset",
      "0",
      "--length",
      String(length),
      file,
    ]).then(
      () => true,
      () => false,
    );
    if (collapsed) return "collapsed";
  }
  const { bytes } = await readFileTail(file, keepBytes);
  const handle = await open(file, "r+");
  try {
    await handle.write(bytes, 0, bytes.length, 0);
    await handle.truncate(bytes.length);
  } finally {
    await handle.close();
  }
  return "copied";
}

/**
 * What a log on a sandbox's disk leaves before that disk is unmounted: its newest `maxBytes`,
 * after as much of `kept` (the log of the sandbox's earlier runs, on the data dir) as fits in
 * `maxBytes` with it, become `kept`. `live` is removed.
 */
export async function archiveConsoleLog(live: string, kept: string, maxBytes: number): Promise<void> {
  const { bytes } = await readFileTail(live, maxBytes);
  if (bytes.length > 0) {
    const earlier = (await readFileTail(kept, maxBytes - bytes.length)).bytes;
    const staging = `${kept}.new`;
    await writeFile(staging, Buffer.concat([earlier, bytes]));
    await rename(staging, kept);
  }
  await rm(live, { force: true });
}

export interface ConsoleLogKeeperOptions {
  /** Newest bytes kept of each log; a log is trimmed once it holds twice this. */
  maxBytes: number;
  /** The console logs of the running sandboxes, for the sweep (which finds adopted ones too). */
  files(): Promise<string[]>;
  log: Logger;
  sweepMs?: number;
}

interface Kept {
  watcher?: FSWatcher;
  /** The check under way. */
  checking?: Promise<void>;
  again: boolean;
}

/** Keeps the console logs of running sandboxes trimmed (see DEFAULT_CONSOLE_LOG_MAX_BYTES). */
export class ConsoleLogKeeper {
  private readonly kept = new Map<string, Kept>();
  private timer: NodeJS.Timeout | undefined;
  private sweeping = false;
  private closed = false;

  constructor(private readonly o: ConsoleLogKeeperOptions) {}

  /** Starts the periodic sweep. */
  start(): void {
    if (this.timer || this.closed) return;
    this.timer = setInterval(() => void this.sweep(), this.o.sweepMs ?? SWEEP_MS);
    this.timer.unref();
  }

  /** Watches `file` from now on (a container was just started on it) and checks it at once. */
  keep(file: string): void {
    if (this.closed) return;
    if (!this.kept.has(file)) {
      const entry: Kept = { again: false };
      this.kept.set(file, entry);
      try {
        // persistent: false, so a watch never keeps the process alive
        entry.watcher = watch(file, { persistent: false }, () => void this.check(file));
        entry.watcher.on("error", () => this.unwatch(entry));
      } catch {
        // no inotify for it (gone already, or out of watches): the sweep still looks at it
      }
    }
    void this.check(file);
  }

  /** Stops looking at `file` (its container is gone). */
  forget(file: string): void {
    const entry = this.kept.get(file);
    if (!entry) return;
    this.unwatch(entry);
    this.kept.delete(file);
  }

  close(): void {
    this.closed = true;
    clearInterval(this.timer);
    this.timer = undefined;
    for (const file of [...this.kept.keys()]) this.forget(file);
  }

  /**
   * Trims `file` if it holds more than twice the limit. A check asked for while one runs is
   * done by that one, once more after its current look; both resolve when it ends.
   */
  check(file: string): Promise<void> {
    const entry = this.kept.get(file);
    if (!entry) return Promise.resolve();
    if (entry.checking) {
      entry.again = true;
      return entry.checking;
    }
    entry.checking = this.checkLoop(file, entry).finally(() => {
      entry.checking = undefined;
    });
    return entry.checking;
  }

  private async checkLoop(file: string, entry: Kept): Promise<void> {
    try {
      do {
        entry.again = false;
        const size = await stat(file).then(
          (s) => s.size,
          () => undefined,
        );
        if (size === undefined) {
          this.forget(file);
          return;
        }
        if (size > 2 * this.o.maxBytes) {
          const how = await trimToNewest(file, this.o.maxBytes);
          this.o.log.debug({ file, size, how }, "trimmed a console log");
        }
      } while (entry.again && this.kept.get(file) === entry);
    } catch (err) {
      this.o.log.warn({ file, err }, "could not trim a console log");
    }
  }

  /** One look at every running sandbox's log: new ones are watched, gone ones forgotten. */
  async sweep(): Promise<void> {
    if (this.sweeping || this.closed) return;
    this.sweeping = true;
    try {
      const files = new Set(await this.o.files());
      for (const file of this.kept.keys()) if (!files.has(file)) this.forget(file);
      for (const file of files) {
        if (this.kept.has(file)) void this.check(file);
        else if (
          await stat(file).then(
            () => true,
            () => false,
          )
        )
          this.keep(file);
      }
    } catch (err) {
      this.o.log.warn({ err }, "could not look at the sandboxes' console logs");
    } finally {
      this.sweeping = false;
    }
  }

  private unwatch(entry: Kept): void {
    entry.watcher?.close();
    entry.watcher = undefined;
  }
}
