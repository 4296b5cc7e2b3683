import { CliError, connect } from "./connection.js";

describe("connect", () => {
  const saved = { ...process.env };
  const names = ["X_API_URL", "X_PROXY_URL", "X_SANDBOX_URL", "X_API_KEY", "X_DOMAIN"];
  beforeEach(() => {
    for (const name of [...names, ...names.map((n) => n.replace("X_", "E2B_"))]) delete process.env[name];
  });
  afterAll(() => {
    process.env = saved;
  });

  it("takes flags over X_ variables over the e2b client's, with local defaults", () => {
    process.env.E2B_API_KEY = "e2b-key";
    expect(connect({})).toMatchObject({
      apiUrl: "http://localhost:3000",
      proxyUrl: "http://localhost:3002",
      apiKey: "e2b-key",
    });
    process.env.E2B_API_URL = "http://e2b:1";
    process.env.E2B_SANDBOX_URL = "http://e2b:2";
    expect(connect({})).toMatchObject({ apiUrl: "http://e2b:1", proxyUrl: "http://e2b:2" });
    process.env.X_API_URL = "http://x:1";
    process.env.X_PROXY_URL = "http://x:2";
    process.env.X_API_KEY = "x-key";
    expect(connect({})).toMatchObject({ apiUrl: "http://x:1", proxyUrl: "http://x:2", apiKey: "x-key" });
    expect(connect({ "api-url": "http://f:1", "proxy-url": "http://f:2", "api-key": "f-key" })).toMatchObject(
      {
        apiUrl: "http://f:1",
        proxyUrl: "http://f:2",
        apiKey: "f-key",
      },
    );
  });

  it("derives both URLs from a domain", () => {
    expect(connect({ domain: "sandbox.example", "api-key": "k" })).toMatchObject({
      apiUrl: "https://api.sandbox.example",
      proxyUrl: "https://sandbox.example",
    });
  });

  it("refuses to go on without a key, saying how to get one", () => {
    expect(() => connect({})).toThrow(CliError);
    expect(() => connect({})).toThrow(/no API key: run `x keys create NAME`.*X_API_KEY/);
  });
});
