/**
 * Templates from OCI images on the platform host: an image made here with umoci (no registry,
 * no network) is imported with skopeo and umoci, built on and run.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import path from "node:path";
import { Sandbox, Template } from "e2b";
import { TEST_DATA_DIR } from "../helpers/platform.js";
import { startTemplatePlatform, type TemplatePlatform } from "./support.js";

/** Programs the image holds; envd (bind-mounted, run by the host's node) needs only their libraries. */
const PROGRAMS = [
  "/usr/bin/bash",
  "/usr/bin/dash",
  "/usr/bin/cat",
  "/usr/bin/whoami",
  "/usr/bin/sync",
  "/usr/bin/node",
];

/** The shared libraries `programs` load (ldd), as absolute paths. */
function libraries(programs: string[]): string[] {
  const libs = new Set<string>();
  for (const program of programs) {
    for (const m of execFileSync("ldd", [program], { encoding: "utf8" }).matchAll(/(\/\S+) \(0x/g))
      libs.add(m[1]!);
  }
  return [...libs];
}

/** A small Debian-compatible root filesystem: bash, coreutils bits and the C/C++ runtime. */
function makeRootfs(root: string): void {
  for (const dir of ["usr/bin", "usr/lib", "usr/lib64", "etc", "root", "srv", "tmp"])
    mkdirSync(path.join(root, dir), { recursive: true });
  for (const [link, target] of [
    ["bin", "usr/bin"],
    ["lib", "usr/lib"],
    ["lib64", "usr/lib64"],
    ["sbin", "usr/bin"],
  ]) {
    symlinkSync(target!, path.join(root, link!));
  }
  // node itself comes from the host at run time; its libraries must be in the image
  for (const file of [...PROGRAMS.filter((p) => !p.endsWith("/node")), ...libraries(PROGRAMS)]) {
    const inside = path.join(root, file.replace(/^\/(lib|lib64|bin)\//, "/usr/$1/"));
    mkdirSync(path.dirname(inside), { recursive: true });
    copyFileSync(file, inside);
  }
  symlinkSync("dash", path.join(root, "usr/bin/sh"));
  writeFileSync(path.join(root, "etc/passwd"), "root:x:0:0:root:/root:/bin/bash\n");
  writeFileSync(path.join(root, "etc/group"), "root:x:0:\n");
  writeFileSync(path.join(root, "hello.txt"), "hello from oci\n");
}

describe("templates from OCI images", () => {
  let p: TemplatePlatform;
  let dir: string;

  beforeAll(async () => {
    p = await startTemplatePlatform("runc");
    p.useClient();
    // images are read from the platform's import directory only
    mkdirSync(path.join(TEST_DATA_DIR, "import"), { recursive: true });
    dir = mkdtempSync(path.join(TEST_DATA_DIR, "import", "oci-test-"));
  });

  afterAll(async () => {
    await p.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("imports an OCI layout made with umoci and builds on it", async () => {
    const layout = path.join(dir, "layout");
    const bundle = path.join(dir, "bundle");
    execFileSync("umoci", ["init", "--layout", layout]);
    execFileSync("umoci", ["new", "--image", `${layout}:t`]);
    execFileSync("umoci", ["unpack", "--image", `${layout}:t`, bundle]);
    makeRootfs(path.join(bundle, "rootfs"));
    execFileSync("umoci", ["repack", "--image", `${layout}:t`, bundle]);
    execFileSync("umoci", [
      "config",
      "--image",
      `${layout}:t`,
      "--config.env",
      "FOO=from-image",
      "--config.workingdir",
      "/srv",
    ]);

    const template = Template().fromImage(`oci:${layout}:t`).runCmd("echo built > /built.txt");
    const logs: string[] = [];
    await Template.build(template, "from-oci", { onBuildLogs: (e) => logs.push(e.message) });
    expect(logs.some((l) => l.startsWith(`importing oci:${layout}:t`))).toBe(true);

    const sandbox = await Sandbox.create("from-oci");
    try {
      const result = await sandbox.commands.run("cat /hello.txt /built.txt; echo $FOO; pwd; whoami");
      expect(result.stdout).toBe("hello from oci\nbuilt\nfrom-image\n/srv\nroot\n");
    } finally {
      await sandbox.kill();
    }

    // an unchanged image is not imported again
    logs.length = 0;
    await Template.build(template, "from-oci", { onBuildLogs: (e) => logs.push(e.message) });
    expect(logs.some((l) => / is cached$/.test(l))).toBe(true);
    expect(logs).toContain("[1/1] RUN echo built > /built.txt (cached)");
  });

  it("refuses registry images and paths outside the import directory", async () => {
    await expect(Template.build(Template().fromImage("ubuntu:22.04"), "from-registry")).rejects.toThrow(
      /does not pull from registries/,
    );
    const outside = p.scratch();
    await expect(Template.build(Template().fromImage(`oci:${outside}:t`), "from-outside")).rejects.toThrow(
      /import directory/,
    );
  });
});
