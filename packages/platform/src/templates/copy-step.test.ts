import { execFileSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { copyFromArchive, invalidSource, sourceRoot } from "./copy-step.js";
import { RootfsView } from "./rootfs-view.js";

/**
 * The review's C1 at the unit: a COPY step's source is looked up in the uploaded archive only.
 * On 90dd82b `..` in the source and a `s -> /` member both copied host files into the layer.
 */
describe("a COPY step on the host", () => {
  let dir: string;
  let rootfs: string;
  let context: string;
  const owner = String(process.getuid?.() ?? 0);

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-copy-step-"));
    rootfs = path.join(dir, "rootfs");
    context = path.join(dir, "context");
    mkdirSync(path.join(rootfs, "etc"), { recursive: true });
    mkdirSync(path.join(rootfs, "usr", "lib"), { recursive: true });
    symlinkSync("usr/lib", path.join(rootfs, "lib"));
    writeFileSync(path.join(rootfs, "etc", "passwd"), "root:x:0:0:root:/root:/bin/bash\n");
    mkdirSync(context);
    writeFileSync(path.join(dir, "host-secret"), "host secret\n");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  async function copy(src: string, dest: string, shape: () => void = () => undefined) {
    shape();
    const archive = path.join(dir, "ctx.tar");
    execFileSync("tar", ["-cf", archive, "-C", context, "."]);
    const scratch = mkdtempSync(path.join(dir, "scratch-"));
    const skipped: string[] = [];
    await copyFromArchive(new RootfsView(rootfs), {
      archive,
      scratch,
      src,
      dest,
      owner: `${owner}:${owner}`,
      user: "root",
      onSkipped: (entry) => skipped.push(entry),
    });
    return skipped;
  }

  it("refuses sources that leave the build context", () => {
    expect(invalidSource("../x")).toMatch(/leaves the build context/);
    expect(invalidSource("a/../../x")).toMatch(/leaves the build context/);
    expect(invalidSource("/etc/shadow")).toMatch(/absolute path/);
    expect(invalidSource("a/../b")).toBeUndefined();
    expect(() => sourceRoot("../../etc")).toThrow(/leaves the build context/);
    expect(sourceRoot("./app/../src/*.ts")).toBe("src");
  });

  it("never reads through a link of the archive, and copies the link itself", async () => {
    const secret = path.join(dir, "host-secret");
    const shape = () => symlinkSync("/", path.join(context, "s"));
    await expect(copy(`s${secret}`, "/leak", shape)).rejects.toThrow(/is not among the uploaded files/);
    rmSync(path.join(context, "s"));
    await copy(".", "/opt/ctx", () => {
      symlinkSync("/", path.join(context, "s"));
      symlinkSync(secret, path.join(context, "abs"));
    });
    expect(readlinkSync(path.join(rootfs, "opt", "ctx", "s"))).toBe("/");
    expect(readlinkSync(path.join(rootfs, "opt", "ctx", "abs"))).toBe(secret);
    expect(readFileSync(secret, "utf8")).toBe("host secret\n");
  });

  it("resolves destinations inside the rootfs and skips FIFOs", async () => {
    const skipped = await copy(".", "/lib/app", () => {
      writeFileSync(path.join(context, "f.txt"), "copied\n");
      execFileSync("mkfifo", [path.join(context, "pipe")]);
    });
    expect(readFileSync(path.join(rootfs, "usr", "lib", "app", "f.txt"), "utf8")).toBe("copied\n");
    expect(skipped).toEqual(["pipe"]);
    expect(() => lstatSync(path.join(rootfs, "usr", "lib", "app", "pipe"))).toThrow();
  });

  it("refuses an /etc/passwd that is a FIFO at once (M2)", async () => {
    rmSync(path.join(rootfs, "etc", "passwd"));
    execFileSync("mkfifo", [path.join(rootfs, "etc", "passwd")]);
    await expect(new RootfsView(rootfs).user("probeuser")).rejects.toThrow(
      /the template's \/etc\/passwd is a FIFO, not a regular file/,
    );
  });
});
