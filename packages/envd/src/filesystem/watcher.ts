import type { Dirent } from "node:fs";
import { readdir } from "node:fs/promises";
import path from "node:path";
import { EventType } from "@x/envd-client";
import type { EnvdContext } from "../context.js";
import { errnoOf } from "../errors.js";
import { IN, Inotify, type InotifyEvent } from "../native/inotify.js";
import { stat } from "../sync-fs.js";
import { allowed, type Principal, R, X } from "./access.js";

/**
 * WRITE comes from IN_MODIFY only (not IN_CLOSE_WRITE as well, which would report every write
 * twice): it is live for files held open, like log files, and the kernel already merges
 * identical consecutive unread events, so a burst of writes does not become a flood.
 */
const MASK =
  IN.CREATE |
  IN.MOVED_TO |
  IN.MOVED_FROM |
  IN.DELETE |
  IN.MODIFY |
  IN.ATTRIB |
  IN.DELETE_SELF |
  IN.ONLYDIR |
  IN.EXCL_UNLINK;

interface WatchListener {
  onInotify(event: InotifyEvent): void;
  /** The kernel dropped watch `wd` (its directory is gone, or it was removed). */
  onIgnored(wd: number): void;
}

/**
 * One inotify instance shared by every watch of this envd: instances are scarce
 * (fs.inotify.max_user_instances is 128 by default, shared with the user's own tools),
 * watches are not. Watching the same directory twice yields the same wd, so listeners are
 * kept per wd and the kernel watch is removed with the last of them.
 */
export class InotifyHub {
  private inotify: Inotify | undefined;
  private readonly listeners = new Map<number, Set<WatchListener>>();

  constructor(private readonly log: EnvdContext["log"]) {}

  /** Watches directory `dir` for `listener`; throws the errno error (ENOENT, ENOTDIR, ...). */
  watch(dir: string, listener: WatchListener, followSymlink: boolean): number {
    this.inotify ??= new Inotify((events) => this.dispatch(events));
    try {
      const wd = this.inotify.addWatch(dir, MASK | (followSymlink ? 0 : IN.DONT_FOLLOW));
      const set = this.listeners.get(wd) ?? new Set();
      set.add(listener);
      this.listeners.set(wd, set);
      return wd;
    } finally {
      this.closeIfIdle();
    }
  }

  unwatch(wd: number, listener: WatchListener): void {
    const set = this.listeners.get(wd);
    if (!set?.delete(listener)) return;
    if (set.size === 0) {
      this.listeners.delete(wd);
      this.inotify?.removeWatch(wd);
    }
    this.closeIfIdle();
  }

  private dispatch(events: InotifyEvent[]): void {
    for (const event of events) {
      if (event.mask & IN.Q_OVERFLOW) {
        this.log("warn", "inotify queue overflowed; some filesystem events were lost");
        continue;
      }
      const set = this.listeners.get(event.wd);
      if (!set) continue;
      if (event.mask & IN.IGNORED) {
        this.listeners.delete(event.wd);
        for (const listener of set) listener.onIgnored(event.wd);
      } else {
        for (const listener of [...set]) listener.onInotify(event);
      }
    }
    this.closeIfIdle();
  }

  private closeIfIdle(): void {
    if (this.listeners.size > 0 || !this.inotify) return;
    this.inotify.close();
    this.inotify = undefined;
  }
}

/** A change under a watched directory, before it becomes a protobuf event. */
export interface WatchEvent {
  /** Relative to the watched directory, `/`-separated. */
  name: string;
  type: EventType;
  /** Absolute path of the entry. */
  path: string;
}

export interface DirWatcherOptions {
  recursive: boolean;
  /** Subdirectories this user cannot list are not watched. */
  principal: Principal;
  log: EnvdContext["log"];
  onEvent: (event: WatchEvent) => void;
  /** The watched directory itself was deleted; no more events will come. */
  onGone: () => void;
}

function eventType(mask: number): EventType | undefined {
  if (mask & (IN.CREATE | IN.MOVED_TO)) return EventType.CREATE;
  if (mask & IN.MODIFY) return EventType.WRITE;
  if (mask & IN.DELETE) return EventType.REMOVE;
  if (mask & IN.MOVED_FROM) return EventType.RENAME;
  if (mask & IN.ATTRIB) return EventType.CHMOD;
  return undefined;
}

/** Directory entries vanish or are locked while we scan; such entries are skipped. */
const SKIPPABLE = new Set(["ENOENT", "ENOTDIR", "EACCES", "EPERM", "ELOOP"]);

/**
 * Watches one directory, and with `recursive` every directory below it, including ones
 * created or moved in later (symlinked directories are not followed). Names of events on a
 * watched directory itself are covered by its parent's events, so they are not reported twice.
 */
export class DirWatcher implements WatchListener {
  private readonly relByWd = new Map<number, string>();
  private readonly wdByRel = new Map<string, number>();
  private closed = false;

  constructor(
    private readonly hub: InotifyHub,
    readonly root: string,
    private readonly options: DirWatcherOptions,
  ) {}

  /** Adds the watches; errors for the root itself (missing, not a directory) are thrown. */
  async start(): Promise<void> {
    const wd = this.hub.watch(this.root, this, true);
    this.track(wd, "");
    if (this.options.recursive) await this.scan(this.root, "", false);
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    for (const wd of this.relByWd.keys()) this.hub.unwatch(wd, this);
    this.relByWd.clear();
    this.wdByRel.clear();
  }

  onInotify(event: InotifyEvent): void {
    if (this.closed) return;
    const rel = this.relByWd.get(event.wd);
    if (rel === undefined) return;
    if (event.mask & IN.DELETE_SELF) {
      if (rel === "") this.gone();
      return;
    }
    if (!event.name) return;
    const name = rel ? `${rel}/${event.name}` : event.name;
    const abs = path.join(this.root, name);
    const type = eventType(event.mask);
    if (type !== undefined) this.options.onEvent({ name, type, path: abs });
    if (!this.options.recursive || !(event.mask & IN.ISDIR)) return;
    if (event.mask & IN.CREATE) this.addSubdir(abs, name, true);
    else if (event.mask & IN.MOVED_TO) this.addSubdir(abs, name, false);
    else if (event.mask & (IN.MOVED_FROM | IN.DELETE)) this.dropSubtree(name);
  }

  onIgnored(wd: number): void {
    const rel = this.relByWd.get(wd);
    if (rel === undefined) return;
    this.relByWd.delete(wd);
    this.wdByRel.delete(rel);
    if (rel === "") this.gone();
  }

  private gone(): void {
    if (this.closed) return;
    this.close();
    this.options.onGone();
  }

  private track(wd: number, rel: string): void {
    this.relByWd.set(wd, rel);
    this.wdByRel.set(rel, wd);
  }

  /**
   * A directory appeared below the root. Entries may land in it before its watch exists, so
   * for a newly created one the scan reports what it finds as CREATE (`announce`); an entry
   * created in the instant between adding the watch and reading the directory can then be
   * reported twice. A directory moved in is not new inside, so only the move is reported.
   */
  private addSubdir(abs: string, rel: string, announce: boolean): void {
    this.watchSubdir(abs, rel)
      .then((added) => (added ? this.scan(abs, rel, announce) : undefined))
      .catch((err: unknown) => {
        if (!SKIPPABLE.has(errnoOf(err) ?? "")) {
          this.options.log("warn", "cannot watch new directory", { path: abs, err: String(err) });
        }
      });
  }

  /** Adds a watch for a subdirectory the user may list; false when it is skipped. */
  private async watchSubdir(abs: string, rel: string): Promise<boolean> {
    if (this.closed || this.wdByRel.has(rel)) return false;
    if (this.options.principal.uid !== 0 && !allowed(this.options.principal, await stat(abs), R | X))
      return false;
    if (this.closed) return false;
    try {
      this.track(this.hub.watch(abs, this, false), rel);
      return true;
    } catch (err) {
      if (SKIPPABLE.has(errnoOf(err) ?? "")) return false;
      throw err;
    }
  }

  private async scan(abs: string, rel: string, announce: boolean): Promise<void> {
    let entries: Dirent[];
    try {
      entries = await readdir(abs, { withFileTypes: true });
    } catch (err) {
      if (SKIPPABLE.has(errnoOf(err) ?? "")) return;
      throw err;
    }
    for (const entry of entries) {
      if (this.closed) return;
      const childRel = rel ? `${rel}/${entry.name}` : entry.name;
      const childAbs = path.join(abs, entry.name);
      if (announce) this.options.onEvent({ name: childRel, type: EventType.CREATE, path: childAbs });
      if (entry.isDirectory() && (await this.watchSubdir(childAbs, childRel).catch(() => false))) {
        await this.scan(childAbs, childRel, announce);
      }
    }
  }

  /**
   * A directory moved away or was deleted: its watches now describe paths elsewhere (or will be
   * dropped by the kernel later, possibly after a new directory of the same name appeared).
   */
  private dropSubtree(rel: string): void {
    for (const [r, wd] of [...this.wdByRel]) {
      if (r !== rel && !r.startsWith(`${rel}/`)) continue;
      this.wdByRel.delete(r);
      this.relByWd.delete(wd);
      this.hub.unwatch(wd, this);
    }
  }
}
