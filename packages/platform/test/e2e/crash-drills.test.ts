/**
 * Failure drills: the real `x serve` SIGKILLs itself at a step of create, pause, resume,
 * snapshot, fork and template build (a crash point, X_TEST_CRASH_AT, set in tests only), is
 * started again, and must leave the store consistent with the host, every surviving sandbox
 * usable, and nothing behind once everything is removed.
 */
import { readdirSync } from "node:fs";
import path from "node:path";
import { Sandbox } from "e2b";
import { pointE2bClient } from "../helpers/platform.js";
import { exited, NOTHING_LEFT, XServe } from "../helpers/x-serve.js";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("crash drills (runc)", () => {
  const x = new XServe(["--runtime", "runc", "--pool-size", "0"]);
  let restoreEnv = () => {};

  beforeAll(async () => {
    await x.start();
    restoreEnv = pointE2bClient(x);
  });

  afterAll(async () => {
    restoreEnv();
    await x.cleanup();
  });

  /** Runs `op` on a platform that dies at `point`, then starts a healthy one on the same data. */
  async function crashAt(point: string, op: () => Promise<unknown>): Promise<void> {
    await x.kill("SIGTERM");
    await x.start({ X_TEST_CRASH_AT: point });
    const child = x.child!;
    // the request dies with the server (fetch fails); a failed assertion in `op` fails the drill
    await op().catch((err: unknown) => {
      if ((err as Error | undefined)?.message !== "fetch failed") throw err;
    });
    await Promise.race([exited(child), sleep(60_000)]);
    if (child.signalCode !== "SIGKILL") throw new Error(`x serve did not crash at ${point}:\n${x.output}`);
    await x.start();
  }

  /** Sandboxes on record, by state. */
  async function onRecord(): Promise<Record<string, string>> {
    const listed = await x.api("GET", "/v2/sandboxes?state=running,paused,error");
    expect(listed.status).toBe(200);
    return Object.fromEntries(
      (listed.body as Array<{ sandboxID: string; state: string }>).map((s) => [s.sandboxID, s.state]),
    );
  }

  /** The host holds containers and networks of sandboxes on record only; each answers after a connect. */
  async function consistent(files: Record<string, string> = {}): Promise<void> {
    const states = await onRecord();
    const left = x.leftovers();
    const ids = new Set(Object.keys(states));
    for (const id of [...left.containers.runc, ...left.containers.runsc]) expect(ids).toContain(id);
    for (const n of left.netns) expect(ids).toContain(n.split(" ")[0]!.slice(x.prefix.length + 1));
    for (const id of ids) {
      const sandbox = await Sandbox.connect(id);
      expect((await sandbox.commands.run("echo ok")).stdout).toBe("ok\n");
      if (files[id]) expect(await sandbox.files.read("/home/user/kept.txt")).toBe(files[id]);
    }
  }

  async function create(): Promise<string> {
    const created = await x.api("POST", "/sandboxes", { templateID: "base", timeout: 600 });
    if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.body)}`);
    const id = created.body.sandboxID as string;
    await (await Sandbox.connect(id)).files.write("/home/user/kept.txt", `kept by ${id}`);
    return id;
  }

  it("a create cut short leaves nothing; a pause or resume cut short leaves a usable sandbox", async () => {
    const before = new Set(Object.keys(await onRecord()));
    await crashAt("create:started", () => x.api("POST", "/sandboxes", { templateID: "base", timeout: 600 }));
    expect(Object.keys(await onRecord()).filter((id) => !before.has(id))).toEqual([]);
    await consistent();

    const id = await create();
    const files = { [id]: `kept by ${id}` };
    // frozen, but the record never said paused: it runs on
    await crashAt("pause:frozen", () => x.api("POST", `/sandboxes/${id}/pause`));
    expect((await onRecord())[id]).toBe("running");
    await consistent(files);

    // thawed, but the record still says paused: its files come back on connect
    expect((await x.api("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
    await crashAt("resume:started", () => x.api("POST", `/sandboxes/${id}/connect`, { timeout: 600 }));
    expect((await onRecord())[id]).toBe("paused");
    await consistent(files);
    expect((await onRecord())[id]).toBe("running");
  });

  it("a snapshot or fork cut short leaves the source usable and no half snapshot", async () => {
    const id = await create();
    const files = { [id]: `kept by ${id}` };
    const snapshotsBefore = (await x.api("GET", "/snapshots")).body.length as number;
    const templatesBefore = (await x.api("GET", "/templates")).body.length as number;
    // before anything is on record, and midway through recording it (one transaction)
    for (const point of ["snapshot:files-copied", "snapshot:build-recorded"]) {
      await crashAt(point, () => x.api("POST", `/sandboxes/${id}/snapshots`, {}));
      expect((await x.api("GET", "/snapshots")).body.length).toBe(snapshotsBefore);
      expect((await x.api("GET", "/templates")).body.length).toBe(templatesBefore);
      expect((await onRecord())[id]).toBe("running");
      await consistent(files);
      // the layer the cut-short snapshot had copied is gone with it
      const layers = readdirSync(path.join(x.dataDir, "layers"));
      expect(
        layers.filter((n) => n.startsWith(`snap-${x.prefix}-`) || n.startsWith(`.staging-${x.prefix}-`)),
      ).toEqual([]);
    }

    const before = new Set(Object.keys(await onRecord()));
    await crashAt("fork:one-created", () => x.api("POST", `/sandboxes/${id}/fork`, { count: 2 }));
    // the fork made before the crash is a sandbox like any other, with the source's files
    const forks = Object.keys(await onRecord()).filter((s) => !before.has(s));
    expect(forks.length).toBe(1);
    await consistent({ ...files, [forks[0]!]: `kept by ${id}` });
    expect((await x.api("GET", "/snapshots")).body.length).toBe(snapshotsBefore + 1);
  });

  it("a template build cut short fails with the reason, and its build sandbox is removed", async () => {
    let templateID = "";
    let buildID = "";
    await crashAt("build:step-ran", async () => {
      const created = await x.api("POST", "/v3/templates", { name: "drill" });
      expect(created.status).toBe(202);
      ({ templateID, buildID } = created.body as { templateID: string; buildID: string });
      const started = await x.api("POST", `/v2/templates/${templateID}/builds/${buildID}`, {
        fromTemplate: "base",
        steps: [{ type: "RUN", args: ["echo built > /home/user/built.txt"] }],
      });
      expect(started.status).toBe(202);
      // the build runs on; the crash comes with its step
      for (let i = 0; i < 600 && !x.ended; i++) await sleep(100);
    });
    const status = await x.api("GET", `/templates/${templateID}/builds/${buildID}/status`);
    expect(status.body.status).toBe("error");
    expect(JSON.stringify(status.body.reason)).toMatch(/restarted/);
    await consistent();
    expect((await x.api("DELETE", `/templates/${templateID}`)).status).toBe(204);
  });

  it("leaves nothing behind once everything is removed", async () => {
    for (const id of Object.keys(await onRecord()))
      expect((await x.api("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    for (const s of (await x.api("GET", "/snapshots")).body as Array<{ snapshotID: string }>) {
      expect((await x.api("DELETE", `/templates/${s.snapshotID.split(":")[0]}`)).status).toBe(204);
    }
    await x.kill("SIGTERM");
    expect(x.child!.exitCode).toBe(0);
    expect(x.leftovers()).toEqual(NOTHING_LEFT);
  });
});
