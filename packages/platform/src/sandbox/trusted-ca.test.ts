import { execFileSync } from "node:child_process";
import { lstatSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { SANDBOX_CA_BUNDLE, SANDBOX_CA_FILE, trustEgressCa } from "./trusted-ca.js";

const CA = "-----BEGIN CERTIFICATE-----\nMIIBegress\n-----END CERTIFICATE-----\n";
const SYSTEM = "-----BEGIN CERTIFICATE-----\nMIIBsystem\n-----END CERTIFICATE-----";

describe("the egress CA in a sandbox's root filesystem", () => {
  let dir: string;
  let rootfs: string;
  const at = (file: string) => path.join(rootfs, file);
  beforeEach(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-trusted-ca-"));
    rootfs = path.join(dir, "rootfs");
    mkdirSync(path.dirname(at(SANDBOX_CA_BUNDLE)), { recursive: true });
  });
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  it("is appended to the bundle once and placed where update-ca-certificates finds it", async () => {
    writeFileSync(at(SANDBOX_CA_BUNDLE), SYSTEM);
    await trustEgressCa(rootfs, CA);
    await trustEgressCa(rootfs, CA);
    expect(readFileSync(at(SANDBOX_CA_BUNDLE), "utf8")).toBe(`${SYSTEM}\n${CA}`);
    expect(readFileSync(at(SANDBOX_CA_FILE), "utf8")).toBe(CA);
    expect(lstatSync(at(SANDBOX_CA_FILE)).mode & 0o777).toBe(0o644);
    // a sandbox without a bundle gets one with the CA alone
    rmSync(at(SANDBOX_CA_BUNDLE));
    await trustEgressCa(rootfs, CA);
    expect(readFileSync(at(SANDBOX_CA_BUNDLE), "utf8")).toBe(CA);
  });

  it("follows no link and writes to nothing but regular files", async () => {
    const outside = path.join(dir, "host-file");
    writeFileSync(outside, "host");
    // the bundle a link to a host file
    symlinkSync(outside, at(SANDBOX_CA_BUNDLE));
    // a directory on the way a link out of the root filesystem
    mkdirSync(at("/usr/local"), { recursive: true });
    const hostDir = path.join(dir, "host-dir");
    mkdirSync(hostDir);
    symlinkSync(hostDir, at("/usr/local/share"));
    await trustEgressCa(rootfs, CA);
    expect(readFileSync(outside, "utf8")).toBe("host");
    expect(execFileSync("ls", ["-A", hostDir]).toString()).toBe("");

    // a FIFO (a device would be the same): neither opened for long nor written
    rmSync(at(SANDBOX_CA_BUNDLE));
    execFileSync("mkfifo", [at(SANDBOX_CA_BUNDLE)]);
    await trustEgressCa(rootfs, CA);
    expect(lstatSync(at(SANDBOX_CA_BUNDLE)).isFIFO()).toBe(true);
  });
});
