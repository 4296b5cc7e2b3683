import { LifecycleHarness } from "./testing/harness.js";

describe("the host's environment for every sandbox", () => {
  let h: LifecycleHarness;
  beforeEach(async () => {
    h = await LifecycleHarness.open();
  });
  afterEach(() => h.close());

  it("reaches envd through /init, under the sandbox's own variables", async () => {
    h.host.sandboxEnv = {
      SSL_CERT_FILE: "/etc/ssl/certs/ca-certificates.crt",
      NODE_EXTRA_CA_CERTS: "/ca.crt",
    };
    const sandbox = await h.create({ envVars: { SSL_CERT_FILE: "/mine.pem", A: "1" } });
    expect(h.host.envdVars.get(sandbox.id)).toEqual({
      SSL_CERT_FILE: "/mine.pem",
      NODE_EXTRA_CA_CERTS: "/ca.crt",
      A: "1",
    });
  });

  it("keeps a sandbox's header transforms in its record across a platform restart", async () => {
    const rules = { "echo.test": [{ transform: { headers: { "X-Test-Token": "v1" } } }] };
    const sandbox = await h.create({ egress: { allowOut: [], denyOut: [], rules } });
    await h.restart();
    expect((await h.store.sandboxes.get(sandbox.id))?.egress.rules).toEqual(rules);
  });
});
