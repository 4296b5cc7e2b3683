/**
 * Review M6 over the real API handler (routing, schema checks, errors) on a real store and the
 * orchestrator over a fake host: no root, no sandbox. Requests above a hard maximum answer 400
 * naming the limit, what a team holds past its limit 403, a fork that does not fit the team's
 * sandboxes 429 before anything is done; GET /teams/{id} shows the limits with their use.
 */
import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { createApi } from "../src/api/index.js";
import { DEFAULTS } from "../src/config.js";
import { newId, nowIso } from "../src/lib/ids.js";
import { silentLogger } from "../src/lib/log.js";
import type { PlatformLimits } from "../src/model/team.js";
import { LifecycleHarness } from "../src/orchestrator/testing/harness.js";
import { hostSize, platformLimits } from "../src/platform-limits.js";
import type { BuildService } from "../src/templates/build-service.js";
import type { Builder } from "../src/templates/builder.js";
import { LayerStore } from "../src/templates/layers.js";
import { BuildUploads } from "../src/templates/uploads.js";
import { Volumes } from "../src/volumes/volumes.js";

describe("limits of what a team may ask for and hold (M6)", () => {
  let h: LifecycleHarness;
  let dir: string;
  let server: http.Server;
  let base: string;
  let key: string;
  let limits: PlatformLimits;

  beforeAll(async () => {
    h = await LifecycleHarness.open();
    dir = mkdtempSync(path.join(os.tmpdir(), "x-limits-"));
    // the platform's own defaults, measured against this host as `x serve` measures them
    limits = { ...platformLimits({ ...DEFAULTS, envdDir: dir }, await hostSize(dir)), sandboxes: 3 };
    key = (await h.store.teams.createKey(h.team.id, "limits")).key;
    // builds are not started here: a builder that never has one is all the routes ask of it
    const builder = { has: () => false } as unknown as Builder;
    const builds: BuildService = {
      builder,
      uploads: await BuildUploads.open(dir),
      layers: new LayerStore(dir, "x"),
      importDir: dir,
      maxUploadBytes: 1024 ** 2,
    };
    const handler = createApi({
      store: h.store,
      orchestrator: h.orchestrator,
      builds,
      volumes: new Volumes({ store: h.store, dataDir: dir, defaultSizeMB: 1024, log: silentLogger }),
      // the routes that use these are not called here
      secrets: undefined as never,
      identityTokens: undefined as never,
      sampler: undefined as never,
      webhookGuard: undefined as never,
      log: silentLogger,
      domain: "sandbox.localhost",
      envdVersion: "0.6.4",
      platformVersion: "test",
      limits,
      diskSizeMB: DEFAULTS.diskSizeMB,
      // what ext4 and a sandbox's boot take of a disk, as rootfs/disk.ts measures it (root only)
      diskFreeSpaceMB: async (sizeMB) => sizeMB - 80,
      availableRuntimes: ["runsc", "runc"],
      consoleLogs: () => [],
      networkDecisions: () => [],
      dropWarmPools: async () => {},
    });
    server = http.createServer(handler);
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server?.close(() => resolve()));
    await h?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  afterEach(async () => {
    for (const s of await h.store.sandboxes.live()) await h.orchestrator.kill(s.id);
    await h.store.teams.setLimits(h.team.id, { volumes: null, templates: null, snapshots: null });
  });

  async function call(method: string, route: string, body?: unknown) {
    const res = await fetch(`${base}${route}`, {
      method,
      headers: { "X-API-Key": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await res.text();
    return { status: res.status, body: text ? JSON.parse(text) : undefined };
  }

  /** What the fake host did: each step's sandbox ids. */
  const hostSteps = () => ({
    boot: h.host.script.idsOf("boot").length,
    freeze: h.host.script.idsOf("freeze").length,
    checkpoint: h.host.script.idsOf("checkpoint").length,
  });

  it("refuses a volume larger than one may be, naming the limit", async () => {
    expect(limits.volumeSizeMB).toBeLessThanOrEqual(64 * 1024);
    const big = await call("POST", "/volumes", { name: "big", sizeMB: 8_000_000 });
    expect(big).toEqual({
      status: 400,
      body: {
        code: 400,
        message: `sizeMB must be at most ${limits.volumeSizeMB} (the team's limit of one volume's size), got 8000000`,
      },
    });
    expect(await h.store.volumes.list(h.team.id)).toEqual([]);
  });

  it("refuses a volume past the team's count (403), and counts only the team's own", async () => {
    await h.store.teams.setLimits(h.team.id, { volumes: 2 });
    const other = await h.store.teams.createTeam("Other", "other-volumes");
    const held = [h.team.id, h.team.id, other.id].map((teamId, i) => ({
      id: newId(),
      teamId,
      name: `held-${i}`,
      sizeMB: 32,
      token: `vol_${i}`,
      createdAt: nowIso(),
    }));
    for (const v of held) await h.store.volumes.insert(v);
    try {
      const third = await call("POST", "/volumes", { name: "third", sizeMB: 32 });
      expect(third).toEqual({
        status: 403,
        body: {
          code: 403,
          message: "your team holds 2 volumes, the most it may (its limit is 2): delete one first",
        },
      });
      expect(await h.store.volumes.count(h.team.id)).toBe(2);
    } finally {
      for (const v of held) await h.store.volumes.delete(v.id);
      await h.store.teams.deleteTeam(other.id);
    }
  });

  it("refuses a template asking for more memory or vCPUs than the platform's limits (400)", async () => {
    const memory = await call("POST", "/v3/templates", { name: "m", memoryMB: 1_000_000 });
    expect(memory).toEqual({
      status: 400,
      body: { code: 400, message: `memory exceeds team limits (max: ${limits.memoryMB} MiB), got 1000000` },
    });
    expect(limits.memoryMB).toBeLessThan(Math.ceil(os.totalmem() / 2 ** 20));
    const cpu = await call("POST", "/v3/templates", { name: "m", cpuCount: 10_000 });
    expect(cpu).toEqual({
      status: 400,
      body: { code: 400, message: `CPU count exceeds team limits (max: ${limits.cpuCount}), got 10000` },
    });
    expect(await h.store.templates.countTemplates(h.team.id)).toBe(1);
  });

  it("refuses a template asking for more free disk than a sandbox's disk of the team leaves (400)", async () => {
    const disk = Math.min(DEFAULTS.diskSizeMB, limits.diskSizeMB);
    const past = await call("POST", "/v3/templates", { name: "f", minFreeDiskMb: disk - 79 });
    expect(past).toEqual({
      status: 400,
      body: {
        code: 400,
        message: `minFreeDiskMb exceeds team limits (max: ${disk - 80} MiB, what a sandbox's disk of ${disk} MiB leaves free), got ${disk - 79}`,
      },
    });
    // the team's own, lower, limit of a sandbox's disk
    await h.store.teams.setLimits(h.team.id, { diskSizeMB: 512 });
    try {
      const lowered = await call("POST", "/v3/templates", { name: "f", minFreeDiskMb: 500 });
      expect(lowered.status).toBe(400);
      expect(lowered.body.message).toBe(
        "minFreeDiskMb exceeds team limits (max: 432 MiB, what a sandbox's disk of 512 MiB leaves free), got 500",
      );
      // what fits goes, on that disk; 0 asks nothing
      for (const minFreeDiskMb of [432, 0]) {
        const fits = await call("POST", "/v3/templates", { name: `f-${minFreeDiskMb}`, minFreeDiskMb });
        expect(fits.status).toBe(202);
        expect((await h.store.templates.getBuild(fits.body.buildID))?.diskSizeMB).toBe(512);
        await h.store.templates.deleteTemplate(fits.body.templateID);
      }
    } finally {
      await h.store.teams.setLimits(h.team.id, { diskSizeMB: null });
    }
    expect(await h.store.templates.countTemplates(h.team.id)).toBe(1);
  });

  it("refuses a new template past the team's count (403); a new build of one it holds still goes", async () => {
    await h.store.teams.setLimits(h.team.id, { templates: 2 });
    const made = await call("POST", "/v3/templates", { name: "kept" });
    expect(made.status).toBe(202);
    const refused = await call("POST", "/v3/templates", { name: "one-more" });
    expect(refused).toEqual({
      status: 403,
      body: {
        code: 403,
        message:
          "your team holds 2 templates (snapshots' included), the most it may (its limit is 2): delete one (DELETE /templates/{templateID}) first",
      },
    });
    expect((await call("POST", "/v3/templates", { name: "kept" })).status).toBe(202);
    expect(await h.store.templates.countTemplates(h.team.id)).toBe(2);
    await call("DELETE", `/templates/${made.body.templateID}`);
  });

  it("refuses a fork above the most one may ask for at once (400), before anything is done", async () => {
    const source = await h.create();
    const before = hostSteps();
    const huge = await call("POST", `/sandboxes/${source.id}/fork`, { count: 100_000 });
    expect(huge.status).toBe(400);
    expect(huge.body).toEqual({ code: 400, message: "body.count must be <= 100" });
    const over = await call("POST", `/sandboxes/${source.id}/fork`, { count: limits.forkCount + 1 });
    expect(over).toEqual({
      status: 400,
      body: {
        code: 400,
        message: `count must be at most ${limits.forkCount} (the team's limit of forks per request), got ${limits.forkCount + 1}`,
      },
    });
    expect(hostSteps()).toEqual(before);
  });

  it("refuses a fork whose forks do not all fit the team's sandboxes (429), before any is made", async () => {
    const source = await h.create();
    await h.create();
    const before = hostSteps();
    const templates = await h.store.templates.countTemplates(h.team.id);
    // two run, three may: two forks would make four
    const refused = await call("POST", `/sandboxes/${source.id}/fork`, { count: 2 });
    expect(refused.status).toBe(429);
    expect(refused.body.message).toBe(
      "your team runs 2 sandboxes and may run 3: 2 more would pass it; kill 1 first, or ask for fewer",
    );
    // nothing was snapshotted, booted or recorded
    expect(hostSteps()).toEqual(before);
    expect(await h.store.snapshots.count(h.team.id)).toBe(0);
    expect(await h.store.templates.countTemplates(h.team.id)).toBe(templates);
    expect(await h.store.sandboxes.countLive(h.team.id)).toBe(2);
  });

  it("refuses a snapshot or a fork past the team's snapshots (403), before the sandbox is touched", async () => {
    await h.store.teams.setLimits(h.team.id, { snapshots: 1 });
    await h.store.snapshots.insert({
      id: newId(),
      teamId: h.team.id,
      sandboxId: "gone",
      templateId: h.template.id,
      buildId: h.build.id,
      createdAt: nowIso(),
    });
    const source = await h.create();
    const before = hostSteps();
    const expected = {
      status: 403,
      body: {
        code: 403,
        message:
          "your team holds 1 snapshots, the most it may (its limit is 1): delete one (Sandbox.deleteSnapshot, DELETE /templates/{templateID}) first",
      },
    };
    expect(await call("POST", `/sandboxes/${source.id}/snapshots`, {})).toEqual(expected);
    expect(await call("POST", `/sandboxes/${source.id}/fork`, { count: 1 })).toEqual(expected);
    expect(hostSteps()).toEqual(before);
    expect(h.host.conditionOf(source.id)).toBe("running");
  });

  it("shows the team's limits, those in force and their use", async () => {
    await h.store.teams.setLimits(h.team.id, { volumes: 7, forkCount: 3 });
    await h.create();
    const detail = await call("GET", `/teams/${h.team.id}`);
    expect(detail.status).toBe(200);
    expect(detail.body.limits).toMatchObject({
      volumes: 7,
      forkCount: 3,
      volumeSizeMB: null,
      memoryMB: null,
    });
    expect(detail.body.effectiveLimits).toEqual({ ...limits, volumes: 7, forkCount: 3 });
    expect(detail.body.usage).toMatchObject({
      liveSandboxes: 1,
      volumes: 0,
      templates: await h.store.templates.countTemplates(h.team.id),
      snapshots: await h.store.snapshots.count(h.team.id),
    });
    await h.store.teams.setLimits(h.team.id, { forkCount: null });
  });
});
