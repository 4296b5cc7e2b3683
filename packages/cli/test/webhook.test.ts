/**
 * `x webhook …` in this process against a real platform (runc): a webhook registered with a
 * secret made by the command gets a sandbox's create and kill signed with that secret, and
 * its delivery log shows them.
 */
import { verifySignature } from "../../platform/src/webhooks/signature.js";
import { startTestPlatform, type TestPlatform } from "../../platform/test/helpers/platform.js";
import { startReceiver, waitUntil } from "../../platform/test/helpers/webhook-receiver.js";
import { CONNECTION_ENV, x, xJson } from "./run-x.js";

let p: TestPlatform;
const saved = { ...process.env };

beforeAll(async () => {
  for (const name of CONNECTION_ENV) delete process.env[name];
  // the receiver is on 127.0.0.1, which an operator must allow webhooks to reach
  p = await startTestPlatform({ runtime: "runc", config: { allowPrivateWebhooks: ["127.0.0.1"] } });
  process.env.X_API_URL = p.apiUrl;
  process.env.X_PROXY_URL = p.proxyUrl;
  process.env.X_API_KEY = p.apiKey;
});

afterAll(async () => {
  await p?.stop();
  process.env = saved;
});

describe("x webhook", () => {
  it("registers a webhook with a secret of its own, lists it, shows its deliveries and removes it", async () => {
    let secret = "";
    // the secret is the command's to make: signatures are checked below, once it is known
    const hook = await startReceiver("not known yet");
    try {
      const created = await xJson<{ id: string; signatureSecret: string; events: string[] }>([
        "webhook",
        "create",
        "cli-hook",
        hook.url,
        "--events",
        "created,sandbox.lifecycle.killed",
      ]);
      secret = created.signatureSecret;
      expect(secret).toMatch(/^[A-Za-z0-9_-]{32}$/);
      expect(created.events).toEqual(["sandbox.lifecycle.created", "sandbox.lifecycle.killed"]);
      const listed = await x(["webhook", "list"]);
      expect(listed.out).toMatch(
        new RegExp(`${created.id}\\s+cli-hook\\s+yes\\s+${hook.url}\\s+created,killed`),
      );
      expect(listed.out).not.toContain(secret);

      const { sandboxID } = await xJson<{ sandboxID: string }>(["sandbox", "create", "--timeout", "120"]);
      expect((await x(["sandbox", "kill", sandboxID])).code).toBe(0);
      await waitUntil("both events are delivered", () => hook.received.length === 2, 30_000);
      for (const r of hook.received)
        expect(verifySignature(secret, r.raw, String(r.headers["e2b-signature"]))).toBe(true);
      await waitUntil(
        "both attempts are logged",
        async () => (await xJson<unknown[]>(["webhook", "deliveries", "cli-hook"])).length === 2,
      );
      const log = await x(["webhook", "deliveries", "cli-hook"]);
      expect(log.out).toMatch(/TIME\s+EVENT\s+TYPE\s+ATTEMPT\s+RESULT\s+MS\s+OUTCOME/);
      expect(log.out).toMatch(/killed\s+1\s+200\s+\d+\s+delivered/);
      expect(log.out).toMatch(/created\s+1\s+200\s+\d+\s+delivered/);

      expect((await x(["webhook", "create", "bad", hook.url, "--events", "exploded"])).code).toBe(2);
      const badUrl = await x(["webhook", "create", "bad", "ftp://example.com"]);
      expect(badUrl.code).toBe(1);
      expect(badUrl.err).toMatch(/url: must be an http:\/\/ or https:\/\/ URL/);
      expect(await x(["webhook", "rm", "cli-hook"])).toEqual({ code: 0, out: "deleted cli-hook\n", err: "" });
      expect((await x(["webhook", "rm", "cli-hook"])).err).toMatch(/no webhook 'cli-hook'/);
      for (const c of ["create", "list", "rm", "deliveries"])
        expect((await x(["webhook", c, "--help"])).code).toBe(0);
    } finally {
      await hook.close();
    }
  });
});
