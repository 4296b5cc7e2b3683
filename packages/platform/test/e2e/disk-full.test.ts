/**
 * Failure drill: the platform's data disk is full when a snapshot is taken. The snapshot fails
 * with a clear error, the source sandbox runs on with its files, and nothing half-written is
 * left (no layer, no template, no snapshot). The full disk is a small tmpfs mounted over the
 * data dir's layers, where snapshots are written.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync } from "node:fs";
import path from "node:path";
import { Sandbox } from "e2b";
import { pointE2bClient } from "../helpers/platform.js";
import { XServe } from "../helpers/x-serve.js";

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
