/**
 * Templates from OCI images on the platform host: an image made here with umoci (no registry,
 * no network) is imported with skopeo and umoci, built on and run. Registry images are in
 * test/e2e/registry-templates.test.ts.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync } from "node:fs";
import path from "node:path";
import { Sandbox, Template } from "e2b";
import { TEST_DATA_DIR } from "../helpers/platform.js";
import { startTemplatePlatform, type TemplatePlatform } from "./support.js";
import { makeRootfs } from "./tiny-rootfs.js";

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

  it("refuses what names no image and paths outside the import directory", async () => {
    await expect(Template.build(Template().fromImage("Not/An:Image!"), "no-image")).rejects.toThrow(
      /is not an image reference/,
    );
    await expect(Template.build(Template().fromImage("oci:relative/dir:t"), "relative")).rejects.toThrow(
      /by its absolute path/,
    );
    const outside = p.scratch();
    await expect(Template.build(Template().fromImage(`oci:${outside}:t`), "from-outside")).rejects.toThrow(
      /import directory/,
    );
  });
});
