/**
 * Failure drill: the platform's data disk is full when a snapshot is taken. The snapshot fails
 * with a clear error, the source sandbox runs on with its files, and nothing half-written is
 * left (no layer, no template, no snapshot). The full disk is a small tmpfs mounted over the
 * data dir's layers, where snapshots are written.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import os from "node:os";
import path from "node:path";
import { Sandbox } from "e2b";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";
import { removeLeftovers, X_SERVE_DATA_PREFIX, XServe } from "../helpers/x-serve.js";

describe("data disk full during a snapshot", () => {
  const x = new XServe(["--runtime", "runc", "--pool-size", "0"]);
  const layers = path.join(x.dataDir, "layers");
  let restoreEnv = () => {};

  beforeAll(async () => {
    mkdirSync(layers, { recursive: true });
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "x-test-full-disk", layers]);
    await x.start();
    restoreEnv = pointE2bClient(x);
  });

  afterAll(async () => {
    restoreEnv();
    // the harness unmounts everything under its data dir
    await x.cleanup();
  });

  it("fails the snapshot with the reason and keeps the source as it was", async () => {
    const sandbox = await Sandbox.create({ timeoutMs: 300_000 });
    await sandbox.files.write("/home/user/kept.txt", "kept");
    // more than the layers' disk holds
    await sandbox.commands.run("head -c 40M /dev/urandom > /home/user/big");
    const templatesBefore = (await x.api("GET", "/templates")).body.length as number;

    const res = await x.api("POST", `/sandboxes/${sandbox.sandboxId}/snapshots`, {});
    expect(res.status).toBe(507);
    expect(res.body).toEqual({ code: 507, message: expect.stringMatching(/disk is full/) });

    expect((await x.api("GET", "/snapshots")).body).toEqual([]);
    expect((await x.api("GET", "/templates")).body.length).toBe(templatesBefore);
    expect(readdirSync(layers)).toEqual([]);
    expect((await x.api("GET", `/sandboxes/${sandbox.sandboxId}`)).body.state).toBe("running");
    expect(await sandbox.files.read("/home/user/kept.txt")).toBe("kept");
    expect((await sandbox.commands.run("wc -c < /home/user/big")).stdout.trim()).toBe(String(40 << 20));
    await sandbox.kill();
  });
});

/**
 * The same drill for a template build: the step's new layer does not fit on the data disk. The
 * build fails with the reason in its status and logs, and no layer, half-copied or staged, is
 * left; once there is room again, builds work. The platform runs in this process (the builder
 * as in the sources) on a data dir of its own, whose layers are the small tmpfs.
 */
describe("data disk full during a template build", () => {
  let dataDir = "";
  let layers = "";
  let context = "";
  let t: TestPlatform | undefined;

  beforeAll(async () => {
    // swept like an `x serve` data dir should this run be killed
    dataDir = mkdtempSync(X_SERVE_DATA_PREFIX);
    layers = path.join(dataDir, "layers");
    context = mkdtempSync(path.join(os.tmpdir(), "x-build-full-"));
    // the cached base image, hard-linked so nothing is rebuilt
    execFileSync("cp", ["-al", path.join(TEST_DATA_DIR, "images"), path.join(dataDir, "images")]);
    mkdirSync(layers);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=16m", "x-test-full-disk", layers]);
    t = await startTestPlatform({ runtime: "runc", config: { dataDir } });
  });

  afterAll(async () => {
    const prefix = t?.platform.config.networkPrefix;
    await t?.stop();
    // whatever a failed test left under the data dir (the tmpfs included), then the dir
    if (dataDir) await removeLeftovers([dataDir], new RegExp(`^${prefix ?? "-"}$`));
    for (const dir of [dataDir, context]) if (dir) rmSync(dir, { recursive: true, force: true });
  });

  async function api(method: string, p: string, body?: unknown) {
    const res = await fetch(`${t!.apiUrl}${p}`, {
      method,
      headers: { "X-API-Key": t!.apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
    });
    const text = await res.text();
    // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as any };
  }

  /** Requests and starts a build, and resolves with its final status and all its log lines. */
  async function build(name: string, steps: object[]) {
    const created = await api("POST", "/v3/templates", { name });
    expect(created.status).toBe(202);
    const { templateID, buildID } = created.body;
    const started = await api("POST", `/v2/templates/${templateID}/builds/${buildID}`, {
      fromTemplate: "base",
      steps,
    });
    expect(started.status).toBe(202);
    const statusPath = `/templates/${templateID}/builds/${buildID}/status`;
    let status: Awaited<ReturnType<typeof api>>;
    do {
      await new Promise((r) => setTimeout(r, 100));
      status = await api("GET", statusPath);
    } while (status.body.status === "waiting" || status.body.status === "building");
    const logs = (await api("GET", `${statusPath}?logsOffset=0`)).body.logEntries.map(
      (e: { message: string }) => e.message,
    ) as string[];
    return { templateID, status: status.body, logs };
  }

  /** What the data dir holds of layers and sandboxes: nothing, between builds. */
  const leftovers = () => ({
    layers: readdirSync(layers),
    sandboxes: existsSync(path.join(dataDir, "sandboxes"))
      ? readdirSync(path.join(dataDir, "sandboxes"))
      : [],
  });

  it("fails a RUN step whose layer does not fit, with the reason, and leaves no layer", async () => {
    // the command itself succeeds: its writable layer is on the sandbox's side, not on the layers' disk
    const run = await build("run-too-big", [
      { type: "RUN", args: ["head -c 40M /dev/urandom > /home/user/big"] },
    ]);
    expect(run.status).toMatchObject({
      status: "error",
      reason: { message: expect.stringMatching(/disk is full/), step: "1" },
    });
    expect(run.logs).toContainEqual(expect.stringMatching(/^Build failed: .*disk is full/));
    expect(leftovers()).toEqual({ layers: [], sandboxes: [] });
  });

  it("fails a COPY step whose files do not fit, with the reason, and leaves no layer", async () => {
    writeFileSync(path.join(context, "big"), randomBytes(40 << 20));
    execFileSync("tar", ["-cf", path.join(context, "files.tar"), "-C", context, "big"]);
    const created = await api("POST", "/v3/templates", { name: "copy-target" });
    const hash = randomBytes(32).toString("hex");
    const link = await api("GET", `/templates/${created.body.templateID}/files/${hash}`);
    const tar = readFileSync(path.join(context, "files.tar"));
    expect((await fetch(link.body.url, { method: "PUT", body: new Uint8Array(tar) })).status).toBe(204);

    const copy = await build("copy-too-big", [
      { type: "COPY", args: ["big", "/home/user/big", "", ""], filesHash: hash },
    ]);
    expect(copy.status).toMatchObject({
      status: "error",
      reason: { message: expect.stringMatching(/disk is full/), step: "1" },
    });
    expect(copy.logs).toContainEqual(expect.stringMatching(/^Build failed: .*disk is full/));
    expect(leftovers()).toEqual({ layers: [], sandboxes: [] });
  });

  it("builds again once the layer fits, and removes it with its template", async () => {
    const small = await build("fits", [{ type: "RUN", args: ["echo small > /home/user/small"] }]);
    expect(small.status).toMatchObject({ status: "ready" });
    const [layer, ...rest] = readdirSync(layers);
    expect(rest).toEqual([]);
    expect(readFileSync(path.join(layers, layer!, "home/user/small"), "utf8")).toBe("small\n");
    expect((await api("DELETE", `/templates/${small.templateID}`)).status).toBe(204);
    expect(leftovers()).toEqual({ layers: [], sandboxes: [] });
  });
});
