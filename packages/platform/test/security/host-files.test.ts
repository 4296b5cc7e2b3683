/**
 * Probes of the security review (2026-12-07) for the host's handling of files a tenant shapes:
 * C1 (a COPY step reading host files), C2 (gVisor's boot preparation following a rootfs's links),
 * M2 (FIFOs and devices planted where the host reads) and M3 (device nodes in imported images).
 * Each goes through the raw API or the public e2b client against a real platform, as a tenant
 * would; each failed on 90dd82b.
 */
import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import {
  existsSync,
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
import { Sandbox, Template } from "e2b";
import { TEST_DATA_DIR } from "../helpers/platform.js";
import { startTemplatePlatform, type TemplatePlatform } from "../templates/support.js";
import { makeRootfs } from "../templates/tiny-rootfs.js";

describe("files a tenant shapes never lead the host outside them", () => {
  let p: TemplatePlatform;
  const nonce = randomBytes(6).toString("hex");
  /** A host file no tenant may read, and a host directory no sandbox may see. */
  const marker = `/var/tmp/x-probe-marker-${nonce}`;
  const secret = `host-secret-${nonce}`;
  const hostDir = `/var/tmp/x-probe-dir-${nonce}`;
  const sandboxes: Sandbox[] = [];
  let importDir: string;

  beforeAll(async () => {
    writeFileSync(marker, `${secret}\n`);
    mkdirSync(hostDir);
    writeFileSync(path.join(hostDir, "host-only"), "host");
    p = await startTemplatePlatform("runsc");
    p.useClient();
    mkdirSync(path.join(TEST_DATA_DIR, "import"), { recursive: true });
    importDir = mkdtempSync(path.join(TEST_DATA_DIR, "import", "probe-"));
  });

  afterEach(async () => {
    await Promise.all(sandboxes.splice(0).map((s) => s.kill().catch(() => undefined)));
  });

  afterAll(async () => {
    await p?.stop();
    rmSync(marker, { force: true });
    rmSync(hostDir, { recursive: true, force: true });
    if (importDir) rmSync(importDir, { recursive: true, force: true });
  });

  /** A gzipped tar of what `shape` makes in a scratch directory, uploaded for the template. */
  async function upload(templateID: string, shape: (dir: string) => void): Promise<string> {
    const dir = mkdtempSync(path.join(os.tmpdir(), "x-probe-ctx-"));
    try {
      shape(dir);
      const archive = path.join(dir, "..", `${path.basename(dir)}.tgz`);
      execFileSync("tar", ["-czf", archive, "-C", dir, "."]);
      const bytes = readFileSync(archive);
      rmSync(archive);
      const hash = createHash("sha256").update(bytes).digest("hex");
      const link = await p.api("GET", `/templates/${templateID}/files/${hash}`);
      expect(link.status).toBe(201);
      expect((await fetch(link.body.url, { method: "PUT", body: new Uint8Array(bytes) })).status).toBe(204);
      return hash;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  async function newTemplate(name: string): Promise<{ templateID: string; buildID: string }> {
    const created = await p.api("POST", "/v3/templates", { name });
    expect(created.status).toBe(202);
    return created.body;
  }

  /** Starts the build and waits for its end: its status, reason and every log line. */
  async function build(t: { templateID: string; buildID: string }, body: object) {
    const started = await p.api("POST", `/v2/templates/${t.templateID}/builds/${t.buildID}`, body);
    if (started.status !== 202)
      return { started, status: "refused", logs: "", reason: started.body?.message };
    for (;;) {
      const s = await p.api("GET", `/templates/${t.templateID}/builds/${t.buildID}/status?logsOffset=0`);
      if (s.body.status === "ready" || s.body.status === "error") {
        const logs = s.body.logEntries.map((e: { message: string }) => e.message).join("\n");
        return { started, status: s.body.status as string, logs, reason: s.body.reason?.message as string };
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it("C1: a COPY source never leaves the uploaded archive, by `..` or by a link in it", async () => {
    for (const src of [`../../../../../../../..${marker}`, `app/../../..${marker}`, marker]) {
      const t = await newTemplate(`c1-dots-${randomBytes(3).toString("hex")}`);
      const hash = await upload(t.templateID, () => undefined);
      const result = await build(t, {
        fromTemplate: "base",
        steps: [
          { type: "COPY", args: [src, "/opt/leak", "root", ""], filesHash: hash },
          { type: "RUN", args: ["cat /opt/leak"] },
        ],
      });
      expect(result.started.status).toBe(400);
      expect(result.reason).toMatch(/leaves the build context|absolute path/);
    }

    // `s -> /` in the archive: the host's file behind it is not among the uploaded files
    const t = await newTemplate("c1-link");
    const hash = await upload(t.templateID, (dir) => {
      symlinkSync("/", path.join(dir, "s"));
      writeFileSync(path.join(dir, "real.txt"), "uploaded\n");
    });
    const leak = await build(t, {
      fromTemplate: "base",
      steps: [
        { type: "COPY", args: [`s${marker}`, "/opt/leak", "root", ""], filesHash: hash },
        { type: "RUN", args: ["cat /opt/leak"] },
      ],
    });
    expect(leak.status).toBe("error");
    expect(leak.reason).toMatch(/is not among the uploaded files/);
    expect(leak.logs).not.toContain(secret);

    // the link itself is content: copied as a link, which inside the sandbox means its own root
    const t2 = await newTemplate("c1-link-kept");
    const hash2 = await upload(t2.templateID, (dir) => {
      symlinkSync("/", path.join(dir, "s"));
      writeFileSync(path.join(dir, "real.txt"), "uploaded\n");
    });
    const kept = await build(t2, {
      fromTemplate: "base",
      steps: [
        { type: "COPY", args: [".", "/opt/ctx", "root", ""], filesHash: hash2 },
        {
          type: "RUN",
          args: [`readlink /opt/ctx/s; cat /opt/ctx/real.txt; cat /opt/ctx/s${marker} || true`, "root"],
        },
      ],
    });
    expect(kept.status).toBe("ready");
    expect(kept.logs).toMatch(/^\/\nuploaded$/m);
    expect(kept.logs).not.toContain(secret);
  });

  it("C2: a template's /etc/ld.so.preload that links to a host file is not read from the host", async () => {
    const t = await newTemplate("c2-preload");
    const hash = await upload(t.templateID, (dir) => symlinkSync(marker, path.join(dir, "ld.so.preload")));
    const result = await build(t, {
      fromTemplate: "base",
      steps: [
        { type: "COPY", args: ["ld.so.preload", "/etc/ld.so.preload", "root", ""], filesHash: hash },
        { type: "RUN", args: ["cat /etc/ld.so.preload"] },
      ],
    });
    expect(result.status).toBe("ready");
    expect(result.logs).toContain("libx-gvisor-compat.so");
    expect(result.logs).not.toContain(secret);
  });

  it("C2: a /tmp made a link under runc is the sandbox's own directory when it boots under gVisor", async () => {
    const created = await p.api("POST", "/v2/sandboxes", {
      templateID: "base",
      runtime: "runc",
      timeout: 300,
    });
    expect(created.status).toBe(201);
    const source = await Sandbox.connect(created.body.sandboxID);
    sandboxes.push(source);
    await source.commands.run(`rm -rf /tmp && ln -s ${hostDir} /tmp`, { user: "root" });
    const { snapshotId } = await source.createSnapshot();

    const booted = await p.api("POST", "/v2/sandboxes", {
      templateID: snapshotId,
      runtime: "runsc",
      timeout: 300,
    });
    expect(booted.status).toBe(201);
    const sandbox = await Sandbox.connect(booted.body.sandboxID);
    sandboxes.push(sandbox);
    const seen = await sandbox.commands.run("ls -A /tmp; touch /tmp/written-by-sandbox && echo wrote", {
      user: "root",
    });
    expect(seen.stdout).not.toContain("host-only");
    expect(seen.stdout).toContain("wrote");
    expect(readdirSync(hostDir)).toEqual(["host-only"]);
  });

  it("M2, M3: an image's FIFOs, links to the host and device nodes are neither opened nor kept", async () => {
    // an OCI image as a registry would serve it, shaped by a tenant
    const layout = path.join(importDir, "layout");
    const bundle = path.join(importDir, "bundle");
    execFileSync("umoci", ["init", "--layout", layout]);
    execFileSync("umoci", ["new", "--image", `${layout}:t`]);
    execFileSync("umoci", ["unpack", "--image", `${layout}:t`, bundle]);
    const rootfs = path.join(bundle, "rootfs");
    makeRootfs(rootfs);
    for (const dir of ["proc", "dev", "sys"]) mkdirSync(path.join(rootfs, dir));
    rmSync(path.join(rootfs, "tmp"), { recursive: true });
    symlinkSync(hostDir, path.join(rootfs, "tmp"));
    execFileSync("mkfifo", [path.join(rootfs, "etc", "ld.so.preload")]);
    execFileSync("mknod", [path.join(rootfs, "etc", "zero"), "c", "1", "5"]);
    execFileSync("umoci", ["repack", "--image", `${layout}:t`, bundle]);
    // the same image with a FIFO for /etc/passwd
    execFileSync("umoci", ["unpack", "--image", `${layout}:t`, `${bundle}-fifo`]);
    rmSync(path.join(`${bundle}-fifo`, "rootfs", "etc", "passwd"));
    execFileSync("mkfifo", [path.join(`${bundle}-fifo`, "rootfs", "etc", "passwd")]);
    execFileSync("umoci", ["repack", "--image", `${layout}:fifo`, `${bundle}-fifo`]);

    // a USER step reads /etc/passwd on the host: a FIFO there fails it at once
    await expect(
      Template.build(Template().fromImage(`oci:${layout}:fifo`).setUser("probeuser"), "m2-passwd"),
    ).rejects.toThrow(/\/etc\/passwd is a FIFO, not a regular file/);

    await Template.build(Template().fromImage(`oci:${layout}:t`), "m2-image");
    const sandbox = await Sandbox.create("m2-image");
    sandboxes.push(sandbox);
    const seen = await sandbox.commands.run(
      "cat /etc/ld.so.preload; ls -A /tmp; test -e /etc/zero && echo device-kept || echo device-gone",
    );
    expect(seen.stdout).toContain("libx-gvisor-compat.so");
    expect(seen.stdout).not.toContain("host-only");
    expect(seen.stdout).toContain("device-gone");
    expect(existsSync(path.join(hostDir, "host-only"))).toBe(true);
    expect(readdirSync(hostDir)).toEqual(["host-only"]);
  });
});
