import { randomUUID } from "node:crypto";
import type { BigIntStats } from "node:fs";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { setImmediate as setImmediatePromise } from "node:timers/promises";
import { create } from "@bufbuild/protobuf";
import { Code, ConnectError, type HandlerContext, type ServiceImpl } from "@connectrpc/connect";
import {
  type EntryInfo,
  EventType,
  type Filesystem,
  type FilesystemEvent,
  FilesystemEventSchema,
  type WatchDirResponse,
  WatchDirResponseSchema,
} from "@x/envd-client";
import { userForRpc } from "../auth.js";
import { type EnvdContext, keepaliveIntervalMs } from "../context.js";
import { errnoOf, fsConnectError } from "../errors.js";
import { resolvePath } from "../paths.js";
import { chown, lstat, mkdir, rename, stat } from "../sync-fs.js";
import {
  allowed,
  checkDir,
  checkTraverse,
  mayUnlink,
  type Principal,
  permissionDenied,
  principalOf,
  R,
  W,
  X,
} from "./access.js";
import { entriesOf, entryInfo } from "./entry.js";
import { DirWatcher, InotifyHub, type WatchEvent } from "./watcher.js";

/** Events a polling watcher keeps between two GetWatcherEvents calls; older ones are dropped. */
const MAX_BUFFERED_EVENTS = 100_000;

interface Caller {
  who: Principal;
  resolve(input: string): string;
}

async function caller(ctx: EnvdContext, hctx: HandlerContext): Promise<Caller> {
  const user = await userForRpc(ctx.state, hctx.requestHeader);
  const who = await principalOf(user);
  return { who, resolve: (input) => resolvePath(input, user) };
}

/** Runs `fn`, turning fs failures into Connect errors that name `target`. */
async function attempt<T>(action: string, target: string, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    throw fsConnectError(err, action, target);
  }
}

async function lstatOrUndefined(p: string): Promise<BigIntStats | undefined> {
  try {
    return await lstat(p, { bigint: true });
  } catch (err) {
    if (errnoOf(err) === "ENOENT") return undefined;
    throw err;
  }
}

/** Process ownership can only be handed over by root; otherwise entries already belong to envd's user. */
async function giveTo(who: Principal, p: string): Promise<void> {
  if (process.getuid?.() === 0) await chown(p, who.uid, who.gid);
}

/**
 * Creates `dir` and its missing parents for `who`, checking write access on the deepest
 * existing ancestor and handing every created directory to `who`. Returns whether anything
 * was created (false: it already existed as a directory).
 */
async function makeDirs(who: Principal, dir: string, action: string, target: string): Promise<boolean> {
  let existing = dir;
  const missing: string[] = [];
  for (;;) {
    const st = await stat(existing).catch((err: unknown) => {
      if (errnoOf(err) === "ENOENT") return undefined;
      throw err;
    });
    if (st) {
      if (!st.isDirectory()) throw Object.assign(new Error("not a directory"), { code: "ENOTDIR" });
      break;
    }
    missing.unshift(existing);
    if (existing === "/") break;
    existing = path.dirname(existing);
  }
  if (missing.length === 0) return false;
  await checkDir(who, existing, W | X, action, target);
  for (const p of missing) {
    try {
      await mkdir(p, { mode: 0o755 });
    } catch (err) {
      // Someone else created it meanwhile: fine for parents, still a conflict for `dir` itself.
      if (errnoOf(err) === "EEXIST" && p !== dir) continue;
      throw err;
    }
    await giveTo(who, p);
  }
  return true;
}

/** Rights to remove a whole tree: each directory in it must be listable and writable. */
async function checkTreeRemovable(who: Principal, dir: string, target: string): Promise<void> {
  if (!allowed(who, await stat(dir), R | W | X)) throw permissionDenied("remove", target, who);
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    if (entry.isDirectory()) await checkTreeRemovable(who, path.join(dir, entry.name), target);
  }
}

/** Entries described per synchronous slice of a listing, between which other requests run. */
const LIST_SLICE = 512;

/** Entries below `dir`, `depth` levels deep (0 and 1: direct children), sorted per directory. */
async function listTree(
  ctx: EnvdContext,
  who: Principal,
  dir: string,
  depth: number,
  out: EntryInfo[],
): Promise<void> {
  const names = (await readdir(dir)).sort();
  for (let i = 0; i < names.length; i += LIST_SLICE) {
    if (i > 0) await setImmediatePromise();
    for (const { entry, st } of await entriesOf(ctx, dir, names.slice(i, i + LIST_SLICE))) {
      out.push(entry);
      if (depth > 1 && st.isDirectory() && allowed(who, st, R | X)) {
        await listTree(ctx, who, entry.path, depth - 1, out).catch((err: unknown) => {
          if (errnoOf(err) !== "ENOENT" && errnoOf(err) !== "EACCES") throw err;
        });
      }
    }
  }
}

async function toProtoEvent(
  ctx: EnvdContext,
  event: WatchEvent,
  includeEntry: boolean,
): Promise<FilesystemEvent> {
  const gone = event.type === EventType.REMOVE || event.type === EventType.RENAME;
  const entry = includeEntry && !gone ? await entryInfo(ctx, event.path).catch(() => undefined) : undefined;
  return create(FilesystemEventSchema, { name: event.name, type: event.type, entry });
}

interface WatchRequest {
  path: string;
  recursive: boolean;
}

/** Validates a watch request: the path must be an existing directory the user may list. */
async function watchTarget(
  ctx: EnvdContext,
  hctx: HandlerContext,
  req: WatchRequest,
): Promise<[Caller, string]> {
  const c = await caller(ctx, hctx);
  const dir = c.resolve(req.path);
  await attempt("watch", dir, async () => {
    await checkTraverse(c.who, path.dirname(dir), "watch", dir);
    const st = await stat(dir);
    if (!st.isDirectory()) throw new ConnectError(`watch ${dir}: not a directory`, Code.InvalidArgument);
    if (!allowed(c.who, st, R | X)) throw permissionDenied("watch", dir, c.who);
  });
  return [c, dir];
}

interface PollingWatcher {
  watcher: DirWatcher;
  events: FilesystemEvent[];
  /** Entry look-ups run in order; GetWatcherEvents waits for those already queued. */
  pending: Promise<void>;
}

export function createFilesystemService(ctx: EnvdContext): ServiceImpl<typeof Filesystem> {
  const hub = new InotifyHub(ctx.log);
  const pollingWatchers = new Map<string, PollingWatcher>();

  return {
    async stat(req, hctx) {
      const { who, resolve } = await caller(ctx, hctx);
      const target = resolve(req.path);
      const entry = await attempt("stat", target, async () => {
        await checkTraverse(who, path.dirname(target), "stat", target);
        return entryInfo(ctx, target);
      });
      return { entry };
    },

    async makeDir(req, hctx) {
      const { who, resolve } = await caller(ctx, hctx);
      const dir = resolve(req.path);
      const entry = await attempt("make directory", dir, async () => {
        const existing = await stat(dir).catch(() => undefined);
        if (existing && !existing.isDirectory()) {
          throw new ConnectError(
            `make directory ${dir}: path exists and is not a directory`,
            Code.InvalidArgument,
          );
        }
        // The public client reads AlreadyExists as "not created" (makeDir returns false).
        if (existing || !(await makeDirs(who, dir, "make directory", dir))) {
          throw new ConnectError(`make directory ${dir}: directory already exists`, Code.AlreadyExists);
        }
        return entryInfo(ctx, dir);
      });
      return { entry };
    },

    async move(req, hctx) {
      const { who, resolve } = await caller(ctx, hctx);
      const source = resolve(req.source);
      const destination = resolve(req.destination);
      const target = `${source} to ${destination}`;
      const entry = await attempt("move", target, async () => {
        await checkTraverse(who, path.dirname(source), "move", target);
        const st = await lstat(source);
        if (!mayUnlink(who, await stat(path.dirname(source)), st))
          throw permissionDenied("move", target, who);
        const parent = path.dirname(destination);
        await makeDirs(who, parent, "move", target);
        await checkDir(who, parent, W | X, "move", target);
        const replaced = await lstatOrUndefined(destination);
        if (replaced && !mayUnlink(who, await stat(parent), replaced))
          throw permissionDenied("move", target, who);
        await rename(source, destination);
        return entryInfo(ctx, destination);
      });
      return { entry };
    },

    async listDir(req, hctx) {
      const { who, resolve } = await caller(ctx, hctx);
      const dir = resolve(req.path);
      const entries: EntryInfo[] = [];
      await attempt("list", dir, async () => {
        await checkTraverse(who, path.dirname(dir), "list", dir);
        const st = await stat(dir);
        if (!st.isDirectory()) throw new ConnectError(`list ${dir}: not a directory`, Code.InvalidArgument);
        if (!allowed(who, st, R | X)) throw permissionDenied("list", dir, who);
        await listTree(ctx, who, dir, Math.max(1, req.depth), entries);
      });
      return { entries };
    },

    async remove(req, hctx) {
      const { who, resolve } = await caller(ctx, hctx);
      const target = resolve(req.path);
      await attempt("remove", target, async () => {
        if (target === "/")
          throw new ConnectError("remove /: refusing to remove the root directory", Code.InvalidArgument);
        // Like E2B's envd (os.RemoveAll), removing what is not there succeeds: the path is gone
        // either way, and the client's `files.remove` of a missing path must not throw.
        const gone = (err: unknown) => {
          const code = errnoOf(err);
          if (code === "ENOENT" || code === "ENOTDIR") return;
          throw err;
        };
        try {
          await checkTraverse(who, path.dirname(target), "remove", target);
        } catch (err) {
          return gone(err);
        }
        const st = await lstat(target).catch(gone);
        if (!st) return;
        if (!mayUnlink(who, await stat(path.dirname(target)), st))
          throw permissionDenied("remove", target, who);
        if (st.isDirectory() && who.uid !== 0) await checkTreeRemovable(who, target, target);
        await rm(target, { recursive: true });
      });
      return {};
    },

    async *watchDir(req, hctx) {
      const [c, dir] = await watchTarget(ctx, hctx, req);
      type Item = { event: WatchEvent } | "keepalive";
      const queue: Item[] = [];
      let gone = false;
      let wake: (() => void) | undefined;
      const notify = () => {
        wake?.();
        wake = undefined;
      };
      const watcher = new DirWatcher(hub, dir, {
        recursive: req.recursive,
        principal: c.who,
        log: ctx.log,
        onEvent: (event) => {
          queue.push({ event });
          notify();
        },
        onGone: () => {
          gone = true;
          notify();
        },
      });
      const keepalive = setInterval(() => {
        queue.push("keepalive");
        notify();
      }, keepaliveIntervalMs(hctx.requestHeader));
      hctx.signal.addEventListener("abort", notify);
      try {
        await attempt("watch", dir, () => watcher.start());
        yield create(WatchDirResponseSchema, { event: { case: "start", value: {} } });
        for (;;) {
          while (queue.length === 0 && !gone && !hctx.signal.aborted) {
            await new Promise<void>((resolve) => {
              wake = resolve;
            });
          }
          // Client gone or Connect-Timeout-Ms reached: end with its reason (DeadlineExceeded).
          hctx.signal.throwIfAborted();
          const item = queue.shift();
          if (item === undefined)
            throw new ConnectError(`watch ${dir}: directory was removed`, Code.NotFound);
          const response: WatchDirResponse =
            item === "keepalive"
              ? create(WatchDirResponseSchema, { event: { case: "keepalive", value: {} } })
              : create(WatchDirResponseSchema, {
                  event: { case: "filesystem", value: await toProtoEvent(ctx, item.event, req.includeEntry) },
                });
          yield response;
        }
      } finally {
        clearInterval(keepalive);
        hctx.signal.removeEventListener("abort", notify);
        watcher.close();
      }
    },

    async createWatcher(req, hctx) {
      const [c, dir] = await watchTarget(ctx, hctx, req);
      const id = randomUUID();
      const state: PollingWatcher = {
        events: [],
        pending: Promise.resolve(),
        watcher: new DirWatcher(hub, dir, {
          recursive: req.recursive,
          principal: c.who,
          log: ctx.log,
          onEvent: (event) => {
            state.pending = state.pending.then(async () => {
              state.events.push(await toProtoEvent(ctx, event, req.includeEntry));
              if (state.events.length > MAX_BUFFERED_EVENTS) state.events.shift();
            });
          },
          onGone: () => undefined,
        }),
      };
      try {
        await attempt("watch", dir, () => state.watcher.start());
      } catch (err) {
        state.watcher.close();
        throw err;
      }
      pollingWatchers.set(id, state);
      return { watcherId: id };
    },

    async getWatcherEvents(req) {
      const state = pollingWatchers.get(req.watcherId);
      if (!state) throw new ConnectError(`watcher '${req.watcherId}' not found`, Code.NotFound);
      await state.pending;
      const events = state.events;
      state.events = [];
      return { events };
    },

    async removeWatcher(req) {
      const state = pollingWatchers.get(req.watcherId);
      if (!state) throw new ConnectError(`watcher '${req.watcherId}' not found`, Code.NotFound);
      pollingWatchers.delete(req.watcherId);
      state.watcher.close();
      return {};
    },
  };
}
