/**
 * Egress header transforms (`network.rules`) through the public e2b client, under both
 * runtimes, against a fake internet of the test's own whose HTTPS server has a CA of its own
 * (given to the platform as `egressCaFiles`) and reflects request headers: the header set on
 * HTTPS (the sandbox trusting the platform's egress CA) and plain HTTP, replacing the
 * sandbox's own; names without a rule not intercepted; live replacement; a placeholder with no
 * value failing closed; rules kept across pause and resume; no CA key inside the sandbox.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { Sandbox } from "e2b";
import { FakeInternet } from "../helpers/fake-internet.js";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";
import { networkDecisionsHolding, runCommand } from "../helpers/sandbox-network.js";

const outside = new FakeInternet("tf", 4);
const ECHO = outside.publicIp(10);
const OTHER = outside.publicIp(11);
Object.assign(outside.zone, { "echo.test": ECHO, "other.test": OTHER });

beforeAll(() => outside.start());
afterAll(() => outside.stop());

const run = (sandbox: Sandbox, cmd: string) => runCommand(sandbox, cmd, 30_000);

/** The headers the echo server saw for a request from the sandbox (curl flags first). */
async function echoed(sandbox: Sandbox, url: string, flags = "") {
  const r = await run(sandbox, `curl -sS -m 8 ${flags} ${url} </dev/null`);
  expect({ url, exitCode: r.exitCode, stderr: r.stderr }).toEqual({ url, exitCode: 0, stderr: "" });
  return JSON.parse(r.stdout) as { headers: Record<string, string>; rawHeaders: string[] };
}

/** The issuer of the certificate the sandbox is shown for a name on 443. */
async function issuer(sandbox: Sandbox, name: string) {
  const r = await run(
    sandbox,
    `openssl s_client -connect ${name}:443 -servername ${name} </dev/null 2>/dev/null | openssl x509 -noout -issuer`,
  );
  return r.stdout.trim();
}

const rules = (value: string) => ({ "echo.test": [{ transform: { headers: { "X-Test-Token": value } } }] });

describe.each(["runc", "runsc"] as const)("header transforms on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({
      runtime,
      config: { dnsUpstreams: [outside.dnsIp], egressCaFiles: [outside.caFile] },
    });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t.stop();
  });

  /** Requests the echo server saw for `/headers`. */
  const echoRequests = async () => (await outside.log()).filter((e) => e.kind.endsWith("-headers")).length;

  it("sets the rule's headers on HTTPS and HTTP, leaves other names alone, follows updates, and fails closed", async () => {
    const sandbox = await Sandbox.create({ network: { rules: rules("v1") } });
    try {
      // HTTPS without -k: the sandbox trusts the certificate the proxy made for echo.test
      expect((await echoed(sandbox, "https://echo.test/headers")).headers["x-test-token"]).toBe("v1");
      const replaced = await echoed(sandbox, "https://echo.test/headers", "-H 'X-Test-Token: mine'");
      expect(replaced.headers["x-test-token"]).toBe("v1");
      expect(replaced.rawHeaders.filter((h) => h.toLowerCase() === "x-test-token")).toHaveLength(1);
      expect(await issuer(sandbox, "echo.test")).toMatch(/x sandbox platform egress CA/);
      // Python and Node trust it too
      const py = await run(
        sandbox,
        `python3 -c "import urllib.request, json; print(json.load(urllib.request.urlopen('https://echo.test/headers'))['headers']['x-test-token'])"`,
      );
      expect(py).toMatchObject({ exitCode: 0, stdout: "v1\n" });
      const node = await run(
        sandbox,
        `/opt/x/bin/node -e "fetch('https://echo.test/headers').then(r => r.json()).then(j => console.log(j.headers['x-test-token']))"`,
      );
      expect(node).toMatchObject({ exitCode: 0, stdout: "v1\n" });

      // the system bundle can be rebuilt inside and keeps the CA (it is in /usr/local/share)
      const rebuilt = await sandbox.commands.run("update-ca-certificates", {
        user: "root",
        timeoutMs: 60_000,
      });
      expect(rebuilt.exitCode).toBe(0);
      expect((await echoed(sandbox, "https://echo.test/headers")).headers["x-test-token"]).toBe("v1");

      // a name without a rule is passed through: the origin's own certificate, which the
      // sandbox does not trust, and no header
      expect(await issuer(sandbox, "other.test")).toMatch(/fake internet CA/);
      const untrusted = await run(sandbox, "curl -sS -m 8 https://other.test/headers </dev/null");
      expect(untrusted.exitCode).toBe(60);
      expect(
        (await echoed(sandbox, "https://other.test/headers", "-k")).headers["x-test-token"],
      ).toBeUndefined();

      // plain HTTP to the rule's name gets it as well, keep-alive requests each
      expect((await echoed(sandbox, "http://echo.test/headers")).headers["x-test-token"]).toBe("v1");
      const twice = await run(
        sandbox,
        "curl -sS -m 8 -H 'X-Test-Token: mine' http://echo.test/headers http://echo.test/headers </dev/null",
      );
      expect(twice.stdout.match(/"x-test-token":"v1"/g)).toHaveLength(2);

      // replaced live: the next request has the new value
      await sandbox.updateNetwork({ rules: rules("v2") });
      expect((await echoed(sandbox, "https://echo.test/headers")).headers["x-test-token"]).toBe("v2");
      expect((await sandbox.getInfo()).network?.rules).toEqual(rules("v2"));

      // kept across pause and resume
      expect(await sandbox.pause()).toBe(true);
      const resumed = await Sandbox.connect(sandbox.sandboxId);
      expect((await resumed.getInfo()).network?.rules).toEqual(rules("v2"));
      expect((await echoed(resumed, "https://echo.test/headers")).headers["x-test-token"]).toBe("v2");

      // a placeholder without a value (no secrets store here): the proxy answers, nothing is sent
      await sandbox.updateNetwork({ rules: rules("Bearer ${e2b.secrets.x}") });
      const before = await echoRequests();
      const refused = await run(
        sandbox,
        "curl -sS -m 8 -w '\\n%{http_code}' https://echo.test/headers </dev/null",
      );
      expect(refused.exitCode).toBe(0);
      expect(refused.stdout).toMatch(/\$\{e2b\.secrets\.x\}[\s\S]*\n502$/);
      expect(await echoRequests()).toBe(before);
      const logged = expect.arrayContaining([
        expect.objectContaining({
          verdict: "denied",
          name: "echo.test",
          port: 443,
          rule: expect.stringContaining("no value for ${e2b.secrets.x}"),
        }),
        expect.objectContaining({
          verdict: "allowed",
          name: "echo.test",
          rule: expect.stringContaining("transform echo.test"),
        }),
        expect.objectContaining({ verdict: "allowed", name: "other.test", port: 443 }),
      ]);
      expect(await networkDecisionsHolding(t, sandbox.sandboxId, logged)).toEqual(logged);

      // the CA is in the sandbox, its key is not
      const key = readFileSync(path.join(TEST_DATA_DIR, "egress-ca", "ca.key"), "utf8");
      const keyLine = key.split("\n").find((l) => l.length > 40 && !l.startsWith("-----"))!;
      const search = await run(
        sandbox,
        `grep -rlF -e '${keyLine}' /etc /usr/local /root /home /tmp 2>/dev/null; env | grep -cF '${keyLine}'`,
      );
      expect(search.stdout.trim()).toBe("0");
      const env = await run(
        sandbox,
        "echo $NODE_EXTRA_CA_CERTS $SSL_CERT_FILE $REQUESTS_CA_BUNDLE $CURL_CA_BUNDLE",
      );
      expect(env.stdout.trim()).toBe(
        "/usr/local/share/ca-certificates/x-egress-ca.crt /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt /etc/ssl/certs/ca-certificates.crt",
      );
    } finally {
      await sandbox.kill();
    }
  });

  it("grants no access: a rule's name is refused under deny-all, and works once allowed by name", async () => {
    const sandbox = await Sandbox.create({ network: { rules: rules("v1"), denyOut: ["0.0.0.0/0"] } });
    try {
      const before = await echoRequests();
      const r = await run(
        sandbox,
        `curl -sS -m 8 --resolve echo.test:443:${ECHO} https://echo.test/headers </dev/null`,
      );
      expect(r.exitCode).not.toBe(0);
      expect(await echoRequests()).toBe(before);
      // the client's recipe: allow the rules' names
      await sandbox.updateNetwork({ rules: rules("v1"), denyOut: ["0.0.0.0/0"], allowOut: ["echo.test"] });
      expect((await echoed(sandbox, "https://echo.test/headers")).headers["x-test-token"]).toBe("v1");
      expect(
        (await run(sandbox, "curl -sS -m 8 -k https://other.test/headers </dev/null")).exitCode,
      ).not.toBe(0);
    } finally {
      await sandbox.kill();
    }
  });
});
