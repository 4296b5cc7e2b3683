import { type InotifyHandle, nativeAddon, type RawInotifyEvent } from "./addon.js";

/** inotify(7) mask bits. */
export const IN = {
  ACCESS: 0x1,
  MODIFY: 0x2,
  ATTRIB: 0x4,
  CLOSE_WRITE: 0x8,
  CLOSE_NOWRITE: 0x10,
  OPEN: 0x20,
  MOVED_FROM: 0x40,
  MOVED_TO: 0x80,
  CREATE: 0x100,
  DELETE: 0x200,
  DELETE_SELF: 0x400,
  MOVE_SELF: 0x800,
  UNMOUNT: 0x2000,
  Q_OVERFLOW: 0x4000,
  IGNORED: 0x8000,
  ONLYDIR: 0x1000000,
  DONT_FOLLOW: 0x2000000,
  EXCL_UNLINK: 0x4000000,
  MASK_ADD: 0x20000000,
  ISDIR: 0x40000000,
} as const;

export type InotifyEvent = RawInotifyEvent;

/**
 * One inotify instance. Events arrive in batches on the main loop (libuv polls the
 * non-blocking fd), in kernel order. `close()` releases the fd and with it every watch.
 */
export class Inotify {
  private handle: InotifyHandle | undefined;

  constructor(onEvents: (events: InotifyEvent[]) => void) {
    this.handle = nativeAddon().inotifyInit(onEvents);
  }

  /** Adds (or updates) a watch on `path`; returns its watch descriptor. */
  addWatch(path: string, mask: number): number {
    return nativeAddon().inotifyAddWatch(this.open(), path, mask);
  }

  removeWatch(wd: number): void {
    nativeAddon().inotifyRmWatch(this.open(), wd);
  }

  close(): void {
    if (!this.handle) return;
    nativeAddon().inotifyClose(this.handle);
    this.handle = undefined;
  }

  private open(): InotifyHandle {
    if (!this.handle) throw new Error("inotify instance is closed");
    return this.handle;
  }
}
