import { execFileSync } from "node:child_process";
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { silentLogger } from "../lib/log.js";
import { gvisorCompat, readyBindTargets } from "./gvisor-compat.js";

/**
 * The review's C2 and M2 at the unit: a rootfs a tenant shaped, prepared for a gVisor boot on
 * the host. On 90dd82b the host file behind a link came into the sandbox's preload list, the
 * host directory behind `/tmp` was its bind source, and a FIFO hung the preparation for good.
 */
describe("a gVisor sandbox's boot preparation over a tenant's rootfs", () => {
  let dir: string;
  let rootfs: string;
  let bundle: string;
  const hostFile = () => path.join(dir, "host-secret");
  const hostDir = () => path.join(dir, "host-dir");

  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-gvisor-compat-"));
    rootfs = path.join(dir, "rootfs");
    bundle = path.join(dir, "bundle");
    mkdirSync(path.join(rootfs, "etc"), { recursive: true });
    mkdirSync(bundle);
    writeFileSync(hostFile(), "host secret\n");
    mkdirSync(hostDir());
    writeFileSync(path.join(hostDir(), "host-only"), "");
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  const prepare = (volumes: string[] = []) => gvisorCompat(bundle, rootfs, "/envd", silentLogger, volumes);
  const preload = () => readFileSync(path.join(bundle, "ld.so.preload"), "utf8");

  it("keeps the template's own preload list", async () => {
    writeFileSync(path.join(rootfs, "etc", "ld.so.preload"), "/usr/lib/own.so\n");
    mkdirSync(path.join(rootfs, "tmp"));
    const { binds } = await prepare();
    expect(preload()).toMatch(/libx-gvisor-compat\.so\n\/usr\/lib\/own\.so\n$/);
    expect(binds.find((b) => b.destination === "/tmp")?.source).toBe(path.join(rootfs, "tmp"));
  });

  it("reads no host file through a link, and binds no host directory as /tmp", async () => {
    symlinkSync(hostFile(), path.join(rootfs, "etc", "ld.so.preload"));
    symlinkSync(hostDir(), path.join(rootfs, "tmp"));
    const { binds } = await prepare();
    expect(preload()).not.toContain("host secret");
    const tmp = binds.find((b) => b.destination === "/tmp")!.source;
    expect(lstatSync(tmp).isDirectory()).toBe(true);
    expect(readdirSync(tmp)).toEqual([]);
    expect(readdirSync(hostDir())).toEqual(["host-only"]);
    expect(readFileSync(hostFile(), "utf8")).toBe("host secret\n");
  });

  it("replaces FIFOs where runsc binds, rather than letting its file server block on them", async () => {
    execFileSync("mkfifo", [path.join(rootfs, "etc", "ld.so.preload")]);
    execFileSync("mkfifo", [path.join(rootfs, "tmp")]);
    execFileSync("mkfifo", [path.join(rootfs, "data")]);
    await prepare(["/data"]);
    expect(preload()).toMatch(/libx-gvisor-compat\.so\n$/);
    expect(lstatSync(path.join(rootfs, "etc", "ld.so.preload")).isFile()).toBe(true);
    expect(lstatSync(path.join(rootfs, "tmp")).isDirectory()).toBe(true);
    expect(lstatSync(path.join(rootfs, "data")).isDirectory()).toBe(true);
  });

  it("checks again before a restore: a /tmp the sandbox made a link since is replaced", async () => {
    mkdirSync(path.join(rootfs, "tmp"));
    await prepare();
    rmSync(path.join(rootfs, "tmp"), { recursive: true });
    symlinkSync("/", path.join(rootfs, "tmp"));
    await readyBindTargets(rootfs, [], silentLogger);
    expect(lstatSync(path.join(rootfs, "tmp")).isDirectory()).toBe(true);
  });
});
