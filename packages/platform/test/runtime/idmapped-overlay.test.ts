// The idmapped overlay runc sandboxes run on (native/idmap.c), without a container: files
// unshifted on disk are seen shifted into the namespace's host range through it, and what the
// namespace's root and user write lands unshifted. Both ways of giving overlayfs its layers
// (file descriptors on Linux 6.8+, paths before). Needs root.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  chownSync,
  closeSync,
  mkdirSync,
  mkdtempSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { idmap } from "../../src/lib/host-native.js";

const HOST_ID = 0x7000_0000 + 4093 * 65_536;

/** Runs `args` as host uid/gid `id` (what a process of the namespace is on the host). */
function as(id: number, args: string[]): void {
  execFileSync("setpriv", [`--reuid=${id}`, `--regid=${id}`, "--clear-groups", "--", ...args], {
    stdio: "pipe",
  });
}

describe.each([false, true])("an idmapped overlay (layers by path: %s)", (byPath) => {
  let dir: string;
  let target: string;
  let disk: string;

  beforeAll(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-idmap-"));
    // the namespace's processes reach the rootfs by path (runc's view dir is theirs)
    chownSync(dir, HOST_ID, HOST_ID);
    chmodSync(dir, 0o711);
    const lower = path.join(dir, "lower");
    disk = path.join(dir, "disk");
    target = path.join(dir, "rootfs");
    for (const d of [
      lower,
      path.join(lower, "home"),
      disk,
      path.join(disk, "upper"),
      path.join(disk, "work"),
      target,
    ])
      mkdirSync(d);
    mkdirSync(path.join(lower, "tmp"), { mode: 0o1777 });
    chownSync(path.join(lower, "tmp"), 0, 0);
    writeFileSync(path.join(lower, "by-root"), "r");
    mkdirSync(path.join(lower, "home", "user"));
    chownSync(path.join(lower, "home", "user"), 1000, 1000);
    const usernsFd = idmap().userns(HOST_ID, 65_536);
    try {
      idmap().idmappedOverlay({
        lowers: [lower],
        disk,
        upper: "upper",
        work: "work",
        target,
        scratch: path.join(dir, "scratch"),
        usernsFd,
        hostId: HOST_ID,
        suid: false,
        byPath,
      });
    } finally {
      closeSync(usernsFd);
    }
  });

  afterAll(() => {
    if (!dir) return;
    idmap().unmount(target, true);
    rmSync(dir, { recursive: true, force: true });
  });

  it("shows the layers' files in the namespace's range, and no clone is left attached", () => {
    expect(statSync(path.join(target, "by-root"))).toMatchObject({ uid: HOST_ID, gid: HOST_ID });
    expect(statSync(path.join(target, "home", "user"))).toMatchObject({
      uid: HOST_ID + 1000,
      gid: HOST_ID + 1000,
    });
    const mounts = execFileSync("findmnt", ["-rn", "-o", "TARGET"], { encoding: "utf8" })
      .split("\n")
      .filter((m) => m.startsWith(`${dir}/`));
    expect(mounts).toEqual([target]);
  });

  it("writes what the namespace's root and user make unshifted into the upper layer", () => {
    as(HOST_ID, ["touch", path.join(target, "made-by-root")]);
    as(HOST_ID + 1000, ["touch", path.join(target, "home", "user", "made-by-user")]);
    // a copy-up and a whiteout: the overlay's own work, done as the namespace's root
    as(HOST_ID, ["rm", path.join(target, "by-root")]);
    expect(statSync(path.join(disk, "upper", "made-by-root"))).toMatchObject({ uid: 0, gid: 0 });
    expect(statSync(path.join(disk, "upper", "home", "user", "made-by-user"))).toMatchObject({
      uid: 1000,
      gid: 1000,
    });
    expect(statSync(path.join(disk, "upper", "by-root")).isCharacterDevice()).toBe(true);
  });

  it("refuses host root a new file: uid 0 is outside the mapping", () => {
    expect(() => writeFileSync(path.join(target, "by-host-root"), "x")).toThrow(/EOVERFLOW/);
  });
});
