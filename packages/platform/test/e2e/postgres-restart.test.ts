/**
 * Failure drill: the platform's PostgreSQL restarts while the platform works. Requests during
 * the outage get a clear 503 (never a hang or a crash of the platform), everything works again
 * once the database is back, and sandboxes made before and after are usable. The database is a
 * cluster of this test's own (initdb in a scratch directory), so other suites on the machine's
 * PostgreSQL never see the restart.
 */
import { Sandbox } from "e2b";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { ScratchPostgres } from "../helpers/scratch-postgres.js";

describe("PostgreSQL restarted under the platform", () => {
  const pg = new ScratchPostgres();
  let t: TestPlatform | undefined;
  let restoreEnv = () => {};

  beforeAll(async () => {
    await pg.init();
    t = await startTestPlatform({ runtime: "runc", databaseUrl: pg.url });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t?.stop().catch((err) => process.stderr.write(`cleanup: platform: ${err}\n`));
    pg.remove();
  });

  const api = async (method: string, p: string, body?: unknown) => {
    const res = await fetch(`${t!.apiUrl}${p}`, {
      method,
      headers: { "X-API-Key": t!.apiKey, ...(body ? { "Content-Type": "application/json" } : {}) },
      body: body ? JSON.stringify(body) : undefined,
      signal: AbortSignal.timeout(20_000),
    });
    return {
      status: res.status,
      headers: res.headers,
      body: (await res.json().catch(() => undefined)) as any,
    };
  };

  it("answers 503 while the database is down and works again once it is back", async () => {
    const before = await Sandbox.create({ timeoutMs: 300_000 });
    await before.files.write("/home/user/kept.txt", "kept");

    // down: every request answers at once, with the reason
    pg.stop();
    for (const [method, p, body] of [
      ["GET", "/v2/sandboxes"],
      ["GET", `/sandboxes/${before.sandboxId}`],
      ["POST", "/sandboxes", { templateID: "base" }],
    ] as const) {
      const res = await api(method, p, body);
      expect(res.status).toBe(503);
      expect(res.headers.get("retry-after")).toMatch(/^\d+$/);
      expect(res.body).toEqual({ code: 503, message: expect.stringMatching(/database/) });
    }
    // the sandbox itself does not depend on the database: it keeps answering through the proxy
    expect((await before.commands.run("echo still")).stdout).toBe("still\n");

    // back: the connections the platform held are gone, new ones must be made
    pg.start();
    let listed = await api("GET", "/v2/sandboxes");
    for (let i = 0; i < 50 && listed.status !== 200; i++) {
      await new Promise((r) => setTimeout(r, 200));
      listed = await api("GET", "/v2/sandboxes");
    }
    expect(listed.status).toBe(200);
    expect((listed.body as Array<{ sandboxID: string }>).map((s) => s.sandboxID)).toEqual([before.sandboxId]);
    // nothing was half-made by the create refused while it was down
    expect(await before.files.read("/home/user/kept.txt")).toBe("kept");
    const after = await Sandbox.create({ timeoutMs: 300_000 });
    expect((await after.commands.run("echo new")).stdout).toBe("new\n");
    await after.kill();
    await before.kill();
  });
});
