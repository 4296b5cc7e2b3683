import { execFileSync } from "node:child_process";
import { chmodSync, lstatSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { statEntries, XATTRS } from "../src/native/stat-entries.js";
import { setXattr } from "../src/native/xattr.js";

describe("statEntries (one addon call for a listing's lstats and xattr names)", () => {
  let dir: string;
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "envd-stat-entries-"));
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  test("gives what lstat gives, a final symlink not followed, and undefined for a missing name", () => {
    writeFileSync(path.join(dir, "f.txt"), "hello");
    chmodSync(path.join(dir, "f.txt"), 0o640);
    mkdirSync(path.join(dir, "sub"));
    symlinkSync("f.txt", path.join(dir, "link"));
    symlinkSync("nowhere", path.join(dir, "dangling"));
    writeFileSync(path.join(dir, "ünï 😀"), "");
    const names = ["f.txt", "sub", "link", "dangling", "gone", "ünï 😀"];
    const stats = statEntries(dir, names);
    expect(stats).toHaveLength(names.length);
    names.forEach((name, i) => {
      if (name === "gone") {
        expect(stats[i]).toBeUndefined();
        return;
      }
      const st = lstatSync(path.join(dir, name), { bigint: true });
      expect(stats[i]).toMatchObject({
        mode: Number(st.mode),
        uid: Number(st.uid),
        gid: Number(st.gid),
        size: Number(st.size),
        mtimeSec: Number(st.mtimeNs / 1_000_000_000n),
        mtimeNsec: Number(st.mtimeNs % 1_000_000_000n),
      });
    });
  });

  test("says which entries carry envd's xattrs", () => {
    writeFileSync(path.join(dir, "plain"), "");
    writeFileSync(path.join(dir, "ours"), "");
    writeFileSync(path.join(dir, "other"), "");
    setXattr(path.join(dir, "ours"), "user.e2b.owner", "me");
    setXattr(path.join(dir, "other"), "user.other", "x");
    // a name list longer than llistxattr's first buffer
    setXattr(path.join(dir, "other"), `user.${"n".repeat(200)}`, "x");
    for (let i = 0; i < 8; i++) setXattr(path.join(dir, "ours"), `user.${"m".repeat(200)}${i}`, "x");
    expect(statEntries(dir, ["plain", "ours", "other"]).map((s) => s?.xattrs)).toEqual([
      XATTRS.none,
      XATTRS.ours,
      XATTRS.none,
    ]);
  });

  test("does not ask each entry of a filesystem without user xattrs (ramfs) for its own", () => {
    const mnt = path.join(dir, "ramfs");
    mkdirSync(mnt);
    execFileSync("mount", ["-t", "ramfs", "none", mnt]);
    try {
      writeFileSync(path.join(mnt, "a"), "");
      mkdirSync(path.join(mnt, "d"));
      const stats = statEntries(mnt, ["a", "d"]);
      expect(stats.map((s) => s?.xattrs)).toEqual([XATTRS.unsupportedFs, XATTRS.unsupportedFs]);
      expect(stats[1]?.mode).toBe(Number(lstatSync(path.join(mnt, "d")).mode));
    } finally {
      execFileSync("umount", [mnt]);
    }
  });

  test("works from the root directory, and names an unreadable directory in its error", () => {
    const [tmp] = statEntries("/", ["tmp"]);
    expect(tmp?.mode).toBe(Number(lstatSync("/tmp").mode));
    expect(() => statEntries(path.join(dir, "missing"), ["x"])).toThrow(
      expect.objectContaining({ code: "ENOENT", message: expect.stringContaining("missing") }),
    );
  });
});
