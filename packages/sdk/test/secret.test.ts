/**
 * `Secret` against a real platform: the public client's methods, with the SDK's own errors
 * (NotFoundError, ConflictError, InvalidArgumentError) and values that never come back.
 */
import { startTestPlatform, type TestPlatform } from "../../platform/test/helpers/platform.js";
import { ConflictError, InvalidArgumentError, NotFoundError, Secret } from "../src/index.js";

let t: TestPlatform;
const saved = { ...process.env };

beforeAll(async () => {
  t = await startTestPlatform({ runtime: "runc" });
  process.env.X_API_URL = t.apiUrl;
  process.env.X_SANDBOX_URL = t.proxyUrl;
  process.env.X_API_KEY = t.apiKey;
});

afterAll(async () => {
  process.env = saved;
  await t?.stop();
});

describe("Secret", () => {
  it("creates, updates, reads, lists and destroys secrets", async () => {
    const teamId = (await t.platform.defaultTeam()).id;
    const created = await Secret.create("Stripe-Key", "sk-1", { metadata: { env: "prod" } });
    expect(created).toEqual({
      secretId: expect.stringMatching(/^sec_[0-7][0-9a-z]{25}$/),
      name: "stripe-key",
      version: 1,
      metadata: { env: "prod" },
      createdAt: expect.any(Date),
      updatedAt: expect.any(Date),
    });
    expect(JSON.stringify(created)).not.toContain("sk-1");
    const updated = await Secret.update(created.secretId, "sk-2");
    expect(updated).toMatchObject({ version: 2, metadata: { env: "prod" } });
    expect(await t.platform.placeholders.secret(teamId, "stripe-key")).toBe("sk-2");
    expect((await Secret.update("stripe-key", "sk-3", { metadata: {} })).metadata).toEqual({});
    expect(await Secret.getInfo("STRIPE-KEY")).toMatchObject({ secretId: created.secretId, version: 3 });
    expect(await Secret.exists("stripe-key")).toBe(true);
    expect(await Secret.exists("other")).toBe(false);

    await expect(Secret.getInfo("other")).rejects.toBeInstanceOf(NotFoundError);
    await expect(Secret.create("stripe-key", "x")).rejects.toBeInstanceOf(ConflictError);
    await expect(Secret.create("no spaces", "x")).rejects.toBeInstanceOf(InvalidArgumentError);
    expect(() => Secret.fill("a}b")).toThrow(InvalidArgumentError);
    expect(Secret.fill("stripe-key")).toBe("${e2b.secrets.stripe-key}");

    await Secret.create("second", "v");
    expect((await Secret.list({ pageSize: 1 })).map((s) => s.name)).toEqual(["second", "stripe-key"]);
    expect(await Secret.destroy("stripe-key")).toBe(true);
    expect(await Secret.destroy("stripe-key")).toBe(false);
    expect(await Secret.destroy("second")).toBe(true);
    expect(await Secret.list()).toEqual([]);
  });
});
