import {
  chmodSync,
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { type EntryInfo, EventType, FileType, type WatchDirResponse } from "@x/envd-client";
import { readMetadata, writeMetadata } from "../src/filesystem/metadata.js";
import { getXattr, setXattr } from "../src/native/xattr.js";
import { type RunningEnvd, startEnvd, tempDir } from "./helpers/envd-process.js";

const TOKEN = "fs-test-token";
const NOBODY = { name: "nobody", uid: 65534, gid: 65534 };
const asNobody = { headers: { Authorization: `Basic ${Buffer.from("nobody:").toString("base64")}` } };

let envd: RunningEnvd;
let root: string;

beforeAll(async () => {
  envd = await startEnvd({ accessToken: TOKEN });
  root = tempDir("envd-fs-");
  chmodSync(root, 0o755);
});

afterAll(async () => {
  await envd?.stop();
  if (root) rmSync(root, { recursive: true, force: true });
});

const fs = () => envd.client.filesystem;

/** A fresh directory under the test root. */
let seq = 0;
function fresh(mode = 0o755): string {
  const dir = path.join(root, `t${++seq}`);
  mkdirSync(dir);
  chmodSync(dir, mode);
  return dir;
}

async function connectError(promise: Promise<unknown>): Promise<ConnectError> {
  try {
    await promise;
  } catch (err) {
    return ConnectError.from(err);
  }
  throw new Error("expected the call to fail");
}

async function expectCode(promise: Promise<unknown>, code: Code, mentions?: string): Promise<void> {
  const err = await connectError(promise);
  expect(Code[err.code]).toBe(Code[code]);
  if (mentions) expect(err.rawMessage).toContain(mentions);
}

async function until(cond: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** Drains a WatchDir stream in the background. */
function collect(stream: AsyncIterable<WatchDirResponse>) {
  const messages: WatchDirResponse[] = [];
  const state: { error?: ConnectError; done: boolean } = { done: false };
  const finished = (async () => {
    try {
      for await (const m of stream) messages.push(m);
    } catch (err) {
      state.error = ConnectError.from(err);
    } finally {
      state.done = true;
    }
  })();
  const fsEvents = () =>
    messages.flatMap((m) =>
      m.event.case === "filesystem" ? [`${EventType[m.event.value.type]} ${m.event.value.name}`] : [],
    );
  return { messages, state, finished, fsEvents };
}

type Collected = ReturnType<typeof collect>;

async function started(c: Collected): Promise<void> {
  await until(() => c.messages.length > 0 || c.state.done, "the start message");
  expect(c.state.error).toBeUndefined();
  expect(c.messages[0]?.event.case).toBe("start");
}

async function expectEvents(c: Collected, expected: string[]): Promise<void> {
  await until(() => expected.every((e) => c.fsEvents().includes(e)), `events ${expected.join(", ")}`).catch(
    (err) => {
      throw new Error(`${(err as Error).message}; got ${c.fsEvents().join(", ")}`);
    },
  );
}

/** inotify instances envd holds and the watches on them, from /proc (fds may close while we look). */
function inotifyUsage(): { instances: number; watches: number } {
  const pid = envd.child.pid;
  let instances = 0;
  let watches = 0;
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      if (readlinkSync(`/proc/${pid}/fd/${fd}`) !== "anon_inode:inotify") continue;
      const info = readFileSync(`/proc/${pid}/fdinfo/${fd}`, "utf8");
      instances++;
      watches += info.split("\n").filter((line) => line.startsWith("inotify wd:")).length;
    } catch {}
  }
  return { instances, watches };
}

/** Waits until envd holds no inotify instance: earlier streams are closed server-side a little later. */
async function noWatches(): Promise<void> {
  await until(() => inotifyUsage().instances === 0, "envd to release every inotify watch");
}

describe("Stat", () => {
  test("describes a file, a directory and a symlink", async () => {
    const dir = fresh();
    const file = path.join(dir, "hello.txt");
    writeFileSync(file, "hello world");
    chmodSync(file, 0o644);
    symlinkSync("hello.txt", path.join(dir, "link"));

    const { entry } = await fs().stat({ path: file });
    const st = statSync(file, { bigint: true });
    expect(entry).toMatchObject({
      name: "hello.txt",
      type: FileType.FILE,
      path: file,
      size: 11n,
      mode: Number(st.mode) & 0o777,
      permissions: "-rw-r--r--",
      owner: "root",
      group: "root",
    });
    expect(entry?.mode).toBe(0o644);
    expect(entry?.symlinkTarget).toBeUndefined();
    expect(entry?.modifiedTime?.seconds).toBe(st.mtimeNs / 1_000_000_000n);
    expect(entry?.modifiedTime?.nanos).toBe(Number(st.mtimeNs % 1_000_000_000n));

    const dirEntry = (await fs().stat({ path: dir })).entry;
    expect(dirEntry).toMatchObject({
      name: path.basename(dir),
      type: FileType.DIRECTORY,
      permissions: "drwxr-xr-x",
    });

    const link = (await fs().stat({ path: path.join(dir, "link") })).entry;
    expect(link).toMatchObject({ type: FileType.SYMLINK, symlinkTarget: file, permissions: "lrwxrwxrwx" });
  });

  test("permission strings carry setuid, setgid and sticky letters", async () => {
    const dir = fresh(0o1777);
    const file = path.join(dir, "suid");
    writeFileSync(file, "");
    chmodSync(file, 0o4754);
    const other = path.join(dir, "sgid");
    writeFileSync(other, "");
    chmodSync(other, 0o2640);
    expect((await fs().stat({ path: dir })).entry?.permissions).toBe("drwxrwxrwt");
    expect((await fs().stat({ path: file })).entry?.permissions).toBe("-rwsr-xr--");
    expect((await fs().stat({ path: other })).entry?.permissions).toBe("-rw-r-S---");
  });

  test("a dangling symlink reports its target made absolute", async () => {
    const dir = fresh();
    symlinkSync("../missing/target", path.join(dir, "dangling"));
    const { entry } = await fs().stat({ path: path.join(dir, "dangling") });
    expect(entry?.symlinkTarget).toBe(path.join(root, "missing", "target"));
  });

  test("~ and relative paths resolve from the user's home", async () => {
    expect((await fs().stat({ path: "~" })).entry?.path).toBe("/root");
    expect((await fs().stat({ path: "." })).entry?.path).toBe("/root");
  });

  test("missing path is NotFound naming the path", async () => {
    const missing = path.join(root, "nope", "file");
    await expectCode(fs().stat({ path: missing }), Code.NotFound, missing);
  });

  test("an unknown user is Unauthenticated", async () => {
    const headers = { Authorization: `Basic ${Buffer.from("no-such-user:").toString("base64")}` };
    await expectCode(fs().stat({ path: root }, { headers }), Code.Unauthenticated, "no-such-user");
  });

  test("a user who cannot search the parent gets PermissionDenied", async () => {
    const dir = fresh(0o700);
    writeFileSync(path.join(dir, "secret"), "x");
    await expectCode(
      fs().stat({ path: path.join(dir, "secret") }, asNobody),
      Code.PermissionDenied,
      "nobody",
    );
  });
});

describe("MakeDir", () => {
  test("creates missing parents and returns the entry", async () => {
    const dir = path.join(fresh(), "a", "b", "c");
    const { entry } = await fs().makeDir({ path: dir });
    expect(entry).toMatchObject({ path: dir, name: "c", type: FileType.DIRECTORY });
    expect(statSync(dir).isDirectory()).toBe(true);
  });

  test("an existing directory is AlreadyExists, a file in the way InvalidArgument", async () => {
    const dir = fresh();
    await expectCode(fs().makeDir({ path: dir }), Code.AlreadyExists, dir);
    const file = path.join(dir, "file");
    writeFileSync(file, "");
    await expectCode(fs().makeDir({ path: file }), Code.InvalidArgument, file);
    await expectCode(fs().makeDir({ path: path.join(file, "sub") }), Code.InvalidArgument, file);
  });

  test("created directories belong to the requesting user", async () => {
    const shared = fresh(0o777);
    const dir = path.join(shared, "x", "y");
    const { entry } = await fs().makeDir({ path: dir }, asNobody);
    expect(entry?.owner).toBe("nobody");
    for (const p of [path.join(shared, "x"), dir]) {
      const st = statSync(p);
      expect([st.uid, st.gid]).toEqual([NOBODY.uid, NOBODY.gid]);
    }
  });

  test("without write access to the parent it is PermissionDenied and nothing is created", async () => {
    const dir = path.join(fresh(0o755), "new", "deeper");
    await expectCode(fs().makeDir({ path: dir }, asNobody), Code.PermissionDenied, dir);
    expect(existsSync(path.dirname(dir))).toBe(false);
  });
});

describe("Move", () => {
  test("renames a file, creating the destination's parents, keeping its metadata", async () => {
    const dir = fresh();
    const source = path.join(dir, "a.txt");
    writeFileSync(source, "content");
    await writeMetadata(source, { tag: "kept" });
    const destination = path.join(dir, "new", "nested", "b.txt");
    const { entry } = await fs().move({ source, destination });
    expect(entry).toMatchObject({ path: destination, name: "b.txt", type: FileType.FILE, size: 7n });
    expect(entry?.metadata).toEqual({ tag: "kept" });
    expect(existsSync(source)).toBe(false);
    expect(readFileSync(destination, "utf8")).toBe("content");
  });

  test("moves a directory tree", async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, "src", "inner"), { recursive: true });
    writeFileSync(path.join(dir, "src", "inner", "f"), "f");
    const { entry } = await fs().move({ source: path.join(dir, "src"), destination: path.join(dir, "dst") });
    expect(entry?.type).toBe(FileType.DIRECTORY);
    expect(readFileSync(path.join(dir, "dst", "inner", "f"), "utf8")).toBe("f");
  });

  test("a missing source is NotFound naming it", async () => {
    const dir = fresh();
    const source = path.join(dir, "ghost");
    await expectCode(fs().move({ source, destination: path.join(dir, "x") }), Code.NotFound, source);
  });

  test("another user cannot move entries out of a directory they cannot write", async () => {
    const dir = fresh(0o755);
    const source = path.join(dir, "root-owned");
    writeFileSync(source, "x");
    const destination = path.join(fresh(0o777), "taken");
    await expectCode(fs().move({ source, destination }, asNobody), Code.PermissionDenied, source);
    expect(existsSync(source)).toBe(true);
  });

  test("parents of the destination created for another user belong to them", async () => {
    const shared = fresh(0o777);
    const source = path.join(shared, "mine");
    writeFileSync(source, "x");
    chownSync(source, NOBODY.uid, NOBODY.gid);
    const destination = path.join(shared, "p", "q", "mine");
    await fs().move({ source, destination }, asNobody);
    expect(statSync(path.join(shared, "p")).uid).toBe(NOBODY.uid);
    expect(statSync(path.join(shared, "p", "q")).uid).toBe(NOBODY.uid);
  });
});

describe("ListDir", () => {
  let tree: string;
  beforeAll(() => {
    tree = fresh();
    mkdirSync(path.join(tree, "a", "b", "c"), { recursive: true });
    writeFileSync(path.join(tree, "top.txt"), "t");
    writeFileSync(path.join(tree, "a", "one.txt"), "1");
    writeFileSync(path.join(tree, "a", "b", "two.txt"), "2");
    writeFileSync(path.join(tree, "a", "b", "c", "three.txt"), "3");
    const outside = fresh();
    writeFileSync(path.join(outside, "far.txt"), "far");
    symlinkSync(outside, path.join(tree, "linkdir"));
  });

  const rel = (entries: EntryInfo[]) => entries.map((e) => path.relative(tree, e.path)).sort();

  test("depth 0 and 1 list direct children only", async () => {
    const expected = ["a", "linkdir", "top.txt"];
    expect(rel((await fs().listDir({ path: tree, depth: 0 })).entries)).toEqual(expected);
    expect(rel((await fs().listDir({ path: tree, depth: 1 })).entries)).toEqual(expected);
  });

  test("depth N descends N levels and does not follow symlinked directories", async () => {
    const { entries } = await fs().listDir({ path: tree, depth: 2 });
    expect(rel(entries)).toEqual(["a", "a/b", "a/one.txt", "linkdir", "top.txt"]);
    const all = (await fs().listDir({ path: tree, depth: 10 })).entries;
    expect(rel(all)).toEqual([
      "a",
      "a/b",
      "a/b/c",
      "a/b/c/three.txt",
      "a/b/two.txt",
      "a/one.txt",
      "linkdir",
      "top.txt",
    ]);
    const link = all.find((e) => e.name === "linkdir");
    expect(link?.type).toBe(FileType.SYMLINK);
    expect(all.find((e) => e.name === "one.txt")).toMatchObject({
      type: FileType.FILE,
      size: 1n,
      owner: "root",
    });
  });

  test("a directory of more entries than one slice lists them all in order, subdirectories right after their entry", async () => {
    const big = fresh();
    const names: string[] = [];
    for (let i = 0; i < 1_300; i++) names.push(`e${String(i).padStart(4, "0")}`);
    for (const name of names) writeFileSync(path.join(big, name), name);
    // directories in the first, second and third slice of the listing
    for (const sub of ["e0001", "e0700", "e1299"]) {
      rmSync(path.join(big, sub));
      mkdirSync(path.join(big, sub));
      writeFileSync(path.join(big, sub, "inner.txt"), "in");
    }
    setXattr(path.join(big, "e0900"), "user.e2b.tag", "nine");
    const { entries } = await fs().listDir({ path: big, depth: 2 });
    const expected: string[] = [];
    for (const name of names) {
      expected.push(name);
      if (["e0001", "e0700", "e1299"].includes(name)) expected.push(`${name}/inner.txt`);
    }
    expect(entries.map((e) => path.relative(big, e.path))).toEqual(expected);
    expect(entries.find((e) => e.name === "e0900")).toMatchObject({
      type: FileType.FILE,
      size: 5n,
      owner: "root",
      group: "root",
      permissions: "-rw-r--r--",
      metadata: { tag: "nine" },
    });
    expect(entries.find((e) => e.name === "e0700")?.type).toBe(FileType.DIRECTORY);
  });

  test("a file is InvalidArgument, a missing path NotFound", async () => {
    const file = path.join(tree, "top.txt");
    await expectCode(fs().listDir({ path: file, depth: 1 }), Code.InvalidArgument, file);
    const missing = path.join(tree, "missing");
    await expectCode(fs().listDir({ path: missing, depth: 1 }), Code.NotFound, missing);
  });

  test("a directory the user cannot read is PermissionDenied", async () => {
    const dir = fresh(0o711);
    await expectCode(fs().listDir({ path: dir, depth: 1 }, asNobody), Code.PermissionDenied, dir);
  });
});

describe("Remove", () => {
  test("removes a file, a symlink (not its target) and a whole tree", async () => {
    const dir = fresh();
    const file = path.join(dir, "f");
    writeFileSync(file, "x");
    const link = path.join(dir, "l");
    symlinkSync(file, link);
    await fs().remove({ path: link });
    expect(() => lstatSync(link)).toThrow();
    expect(existsSync(file)).toBe(true);
    await fs().remove({ path: file });
    expect(existsSync(file)).toBe(false);

    mkdirSync(path.join(dir, "t", "u", "v"), { recursive: true });
    writeFileSync(path.join(dir, "t", "u", "v", "w"), "w");
    await fs().remove({ path: path.join(dir, "t") });
    expect(existsSync(path.join(dir, "t"))).toBe(false);
  });

  test("a missing path (or one under a missing directory) is already removed: no error", async () => {
    const missing = path.join(fresh(), "ghost");
    await expect(fs().remove({ path: missing })).resolves.toBeDefined();
    await expect(fs().remove({ path: path.join(missing, "deeper") })).resolves.toBeDefined();
  });

  test("another user cannot remove root's file, but can remove their own", async () => {
    const sticky = fresh(0o1777);
    const rootFile = path.join(sticky, "root-file");
    writeFileSync(rootFile, "x");
    await expectCode(fs().remove({ path: rootFile }, asNobody), Code.PermissionDenied, rootFile);
    expect(existsSync(rootFile)).toBe(true);

    const own = path.join(sticky, "own");
    writeFileSync(own, "x");
    chownSync(own, NOBODY.uid, NOBODY.gid);
    await fs().remove({ path: own }, asNobody);
    expect(existsSync(own)).toBe(false);
  });
});

describe("metadata as extended attributes", () => {
  test("user.e2b.* attributes round-trip and show up in entries", async () => {
    const dir = fresh();
    const file = path.join(dir, "meta");
    writeFileSync(file, "x");
    await writeMetadata(file, { a: "1", "b-key": "two words" });
    expect(getXattr(file, "user.e2b.a")?.toString()).toBe("1");
    expect(await readMetadata(file)).toEqual({ a: "1", "b-key": "two words" });
    setXattr(file, "user.unrelated", "ignored");
    expect((await fs().stat({ path: file })).entry?.metadata).toEqual({ a: "1", "b-key": "two words" });

    await writeMetadata(file, { a: "changed" });
    expect(await readMetadata(file)).toEqual({ a: "changed" });
    expect(getXattr(file, "user.unrelated")?.toString()).toBe("ignored");
    expect(getXattr(file, "user.e2b.b-key")).toBeUndefined();

    const listed = (await fs().listDir({ path: dir, depth: 1 })).entries;
    expect(listed[0]?.metadata).toEqual({ a: "changed" });
  });

  test("errors name the path and carry the errno", async () => {
    const missing = path.join(root, "no-such-file");
    expect(() => getXattr(missing, "user.e2b.a")).toThrow(expect.objectContaining({ code: "ENOENT" }));
    await expect(readMetadata(missing)).rejects.toThrow(missing);
  });
});

describe("WatchDir", () => {
  test("a missing path is NotFound, a file InvalidArgument", async () => {
    const missing = path.join(root, "not-there");
    const first = collect(fs().watchDir({ path: missing }));
    await first.finished;
    expect(first.state.error?.code).toBe(Code.NotFound);
    expect(first.state.error?.rawMessage).toContain(missing);

    const file = path.join(fresh(), "file");
    writeFileSync(file, "");
    const second = collect(fs().watchDir({ path: file }));
    await second.finished;
    expect(second.state.error?.code).toBe(Code.InvalidArgument);
    expect(second.state.error?.rawMessage).toContain(file);
  });

  test("recursive: create, write, chmod, rename, remove, and directories created later", async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, "existing"));
    const abort = new AbortController();
    const c = collect(fs().watchDir({ path: dir, recursive: true }, { signal: abort.signal }));
    await started(c);

    writeFileSync(path.join(dir, "f.txt"), "one");
    await expectEvents(c, ["CREATE f.txt", "WRITE f.txt"]);
    chmodSync(path.join(dir, "f.txt"), 0o600);
    await expectEvents(c, ["CHMOD f.txt"]);
    renameSync(path.join(dir, "f.txt"), path.join(dir, "g.txt"));
    await expectEvents(c, ["RENAME f.txt", "CREATE g.txt"]);
    unlinkSync(path.join(dir, "g.txt"));
    await expectEvents(c, ["REMOVE g.txt"]);

    writeFileSync(path.join(dir, "existing", "in.txt"), "x");
    await expectEvents(c, ["CREATE existing/in.txt", "WRITE existing/in.txt"]);

    mkdirSync(path.join(dir, "later"));
    await expectEvents(c, ["CREATE later"]);
    writeFileSync(path.join(dir, "later", "new.txt"), "x");
    await expectEvents(c, ["CREATE later/new.txt"]);

    // Created in one go: inner levels may exist before their watch does, and are still reported.
    mkdirSync(path.join(dir, "p", "q", "r"), { recursive: true });
    writeFileSync(path.join(dir, "p", "q", "r", "deep.txt"), "x");
    await expectEvents(c, ["CREATE p", "CREATE p/q", "CREATE p/q/r", "CREATE p/q/r/deep.txt"]);
    writeFileSync(path.join(dir, "p", "q", "r", "deep.txt"), "more");
    await expectEvents(c, ["WRITE p/q/r/deep.txt"]);

    // A directory moved within the tree is watched under its new name.
    renameSync(path.join(dir, "later"), path.join(dir, "moved"));
    await expectEvents(c, ["RENAME later", "CREATE moved"]);
    writeFileSync(path.join(dir, "moved", "after.txt"), "x");
    await expectEvents(c, ["CREATE moved/after.txt"]);

    rmSync(path.join(dir, "p"), { recursive: true });
    await expectEvents(c, ["REMOVE p/q/r/deep.txt", "REMOVE p/q/r", "REMOVE p/q", "REMOVE p"]);

    expect(c.fsEvents().filter((e) => e === "CHMOD f.txt")).toHaveLength(1);
    expect(c.state.done).toBe(false);
    abort.abort();
    await c.finished;
  });

  test("non-recursive watching ignores changes in subdirectories", async () => {
    const dir = fresh();
    mkdirSync(path.join(dir, "sub"));
    const abort = new AbortController();
    const c = collect(fs().watchDir({ path: dir, recursive: false }, { signal: abort.signal }));
    await started(c);
    writeFileSync(path.join(dir, "sub", "hidden.txt"), "x");
    writeFileSync(path.join(dir, "visible.txt"), "x");
    await expectEvents(c, ["CREATE visible.txt"]);
    expect(c.fsEvents().some((e) => e.includes("hidden"))).toBe(false);
    abort.abort();
    await c.finished;
  });

  test("include_entry attaches the entry while it still exists", async () => {
    const dir = fresh();
    const abort = new AbortController();
    const c = collect(fs().watchDir({ path: dir, includeEntry: true }, { signal: abort.signal }));
    await started(c);
    writeFileSync(path.join(dir, "e.txt"), "12345");
    await expectEvents(c, ["WRITE e.txt"]);
    unlinkSync(path.join(dir, "e.txt"));
    await expectEvents(c, ["REMOVE e.txt"]);
    const events = c.messages.flatMap((m) => (m.event.case === "filesystem" ? [m.event.value] : []));
    const created = events.find((e) => e.type === EventType.CREATE);
    expect(created?.entry).toMatchObject({
      name: "e.txt",
      path: path.join(dir, "e.txt"),
      type: FileType.FILE,
    });
    expect(events.find((e) => e.type === EventType.REMOVE)?.entry).toBeUndefined();
    abort.abort();
    await c.finished;
  });

  test("sends keepalives at the interval the client asks for", async () => {
    const abort = new AbortController();
    const c = collect(
      fs().watchDir({ path: fresh() }, { signal: abort.signal, headers: { "Keepalive-Ping-Interval": "1" } }),
    );
    await started(c);
    await until(
      () => c.messages.filter((m) => m.event.case === "keepalive").length >= 2,
      "two keepalives",
      4000,
    );
    abort.abort();
    await c.finished;
  });

  test("cancelling the stream releases its inotify watches", async () => {
    await noWatches();
    const dir = fresh();
    mkdirSync(path.join(dir, "a", "b"), { recursive: true });
    const abort = new AbortController();
    const c = collect(fs().watchDir({ path: dir, recursive: true }, { signal: abort.signal }));
    await started(c);
    expect(inotifyUsage()).toEqual({ instances: 1, watches: 3 });
    abort.abort();
    await c.finished;
    await noWatches();
  });

  test("Connect-Timeout-Ms ends the stream with DeadlineExceeded and releases watches", async () => {
    await noWatches();
    const c = collect(fs().watchDir({ path: fresh() }, { timeoutMs: 800 }));
    await started(c);
    await c.finished;
    expect(c.state.error?.code).toBe(Code.DeadlineExceeded);
    await noWatches();
  });

  test("the stream ends with NotFound when the watched directory is removed", async () => {
    const dir = fresh();
    const c = collect(fs().watchDir({ path: dir }));
    await started(c);
    rmSync(dir, { recursive: true });
    await c.finished;
    expect(c.state.error?.code).toBe(Code.NotFound);
    expect(c.state.error?.rawMessage).toContain(dir);
  });

  test("watching a directory the user cannot read is PermissionDenied", async () => {
    const c = collect(fs().watchDir({ path: fresh(0o711) }, asNobody));
    await c.finished;
    expect(c.state.error?.code).toBe(Code.PermissionDenied);
  });
});

describe("polling watcher", () => {
  test("buffers events until fetched, clears them, and is removed with its watches", async () => {
    await noWatches();
    const dir = fresh();
    mkdirSync(path.join(dir, "sub"));
    const { watcherId } = await fs().createWatcher({ path: dir, recursive: true, includeEntry: true });
    expect(watcherId).toMatch(/\S/);
    expect(inotifyUsage()).toEqual({ instances: 1, watches: 2 });

    const file = path.join(dir, "sub", "p.txt");
    writeFileSync(file, "x");
    const seen: string[] = [];
    const entries: EntryInfo[] = [];
    const deadline = Date.now() + 5000;
    while (!(seen.includes("CREATE sub/p.txt") && seen.includes("WRITE sub/p.txt"))) {
      if (Date.now() > deadline) throw new Error(`missing events; got ${seen.join(", ")}`);
      const { events } = await fs().getWatcherEvents({ watcherId });
      for (const e of events) {
        seen.push(`${EventType[e.type]} ${e.name}`);
        if (e.entry) entries.push(e.entry);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(entries[0]).toMatchObject({ path: file, type: FileType.FILE });
    expect((await fs().getWatcherEvents({ watcherId })).events).toEqual([]);

    await fs().removeWatcher({ watcherId });
    expect(inotifyUsage().watches).toBe(0);
    await noWatches();
    await expectCode(fs().getWatcherEvents({ watcherId }), Code.NotFound, watcherId);
    await expectCode(fs().removeWatcher({ watcherId }), Code.NotFound, watcherId);
  });

  test("a missing path is NotFound, an unknown id NotFound", async () => {
    const missing = path.join(root, "absent");
    await expectCode(fs().createWatcher({ path: missing }), Code.NotFound, missing);
    await expectCode(
      fs().getWatcherEvents({ watcherId: "no-such-watcher" }),
      Code.NotFound,
      "no-such-watcher",
    );
  });
});
