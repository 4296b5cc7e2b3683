/**
 * Credentials that never enter the sandbox (issue 28), through the public e2b client under both
 * runtimes, against a fake internet whose HTTPS echo server reflects request headers: a team's
 * secret and a sandbox's identity token put into outbound requests by the egress proxy; the
 * echo server sees them, nothing inside the sandbox does; an updated secret is used on the
 * next request, a deleted one fails closed; the token verifies against the platform's key set;
 * and all of it holds through a restart of the platform.
 */
import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Sandbox, Secret } from "e2b";
import { createRemoteJWKSet, jwtVerify } from "jose";
import { FakeInternet } from "../helpers/fake-internet.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { runCommand } from "../helpers/sandbox-network.js";

const outside = new FakeInternet("cb", 4);
Object.assign(outside.zone, { "api.echo.test": outside.publicIp(10) });

beforeAll(() => outside.start());
afterAll(() => outside.stop());

const SECRET_V1 = "s3cr3t-v1-4f8a9c2e";
const SECRET_V2 = "s3cr3t-v2-7b1d0e93";

describe.each(["runc", "runsc"] as const)("credential brokering on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};
  let sandbox: Sandbox | undefined;
  const secretName = `gh-token-${runtime}`;
  // the store outlives the first platform: the second one starts on it
  const dbDir = mkdtempSync(path.join(os.tmpdir(), "x-brokering-"));
  const databaseUrl = `sqlite:${path.join(dbDir, "platform.db")}`;

  const start = (reuse?: TestPlatform) =>
    startTestPlatform({
      runtime,
      databaseUrl,
      ...(reuse ? { networkPrefix: reuse.platform.config.networkPrefix } : {}),
      config: {
        dnsUpstreams: [outside.dnsIp],
        egressCaFiles: [outside.caFile],
        ...(reuse ? { networkCidr: reuse.platform.config.networkCidr } : {}),
      },
    });

  beforeAll(async () => {
    t = await start();
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    await sandbox?.kill().catch(() => false);
    await Secret.destroy(secretName).catch(() => false);
    restoreEnv();
    await t?.stop();
    rmSync(dbDir, { recursive: true, force: true });
  });

  /** What the echo server saw for one request from the sandbox. */
  async function echoed(s: Sandbox): Promise<{ status: string; headers: Record<string, string> }> {
    const r = await runCommand(
      s,
      "curl -sS -m 8 -w '\\n%{http_code}' https://api.echo.test/headers </dev/null",
      30_000,
    );
    expect(r.exitCode).toBe(0);
    const lines = r.stdout.trimEnd().split("\n");
    const status = lines.pop() as string;
    const body = lines.join("\n");
    return { status, headers: status === "200" ? JSON.parse(body).headers : {} };
  }

  /**
   * Whether a value can be found anywhere the sandbox's code could look: its environment, every
   * process's environment and command line, and its files. The value is handed to the search
   * reversed and turned back through a pipe, so the search itself puts it nowhere it looks.
   */
  async function insideHas(s: Sandbox, value: string): Promise<boolean> {
    const needle = `<(printf %s '${[...value].reverse().join("")}' | rev)`;
    const r = await s.commands.run(
      [
        `files=$(grep -rlaF -f ${needle} /etc /home /root /tmp /var /opt /usr/local /run 2>/dev/null | wc -l)`,
        `procs=$( (env; cat /proc/[0-9]*/environ /proc/[0-9]*/cmdline) 2>/dev/null | grep -caF -f ${needle})`,
        'echo "$files $procs"',
      ].join("; "),
      { user: "root", timeoutMs: 60_000 },
    );
    return r.stdout.trim() !== "0 0";
  }

  it("puts the secret and the identity token into requests, never into the sandbox, through a restart", async () => {
    const secret = await Secret.create(secretName, SECRET_V1, { metadata: { use: "github" } });
    expect(secret).toMatchObject({ name: secretName, version: 1 });
    sandbox = await Sandbox.create({
      timeoutMs: 600_000,
      iam: { tokens: { aws: Secret.iamToken({ audience: "sts.amazonaws.com", tokenType: "JWT-SVID" }) } },
      network: {
        rules: {
          "*.echo.test": [
            {
              transform: ({ iam }) => ({
                headers: {
                  Authorization: `Bearer ${Secret.fill(secretName)}`,
                  "X-Identity": iam.tokens.aws as string,
                },
              }),
            },
          ],
        },
      },
    });

    const first = await echoed(sandbox);
    expect(first.status).toBe("200");
    expect(first.headers.authorization).toBe(`Bearer ${SECRET_V1}`);
    // an independent verifier: the platform's published key set, the audience, short life
    const jwks = createRemoteJWKSet(new URL(`${t.apiUrl}/.well-known/jwks.json`));
    const { payload } = await jwtVerify(first.headers["x-identity"] as string, jwks, {
      audience: "sts.amazonaws.com",
    });
    expect(payload.sub).toContain(sandbox.sandboxId);
    expect((payload.exp as number) - Math.floor(Date.now() / 1000)).toBeLessThanOrEqual(300);

    // the sandbox itself never holds the value: not its environment, files or processes
    expect(await insideHas(sandbox, SECRET_V1)).toBe(false);
    // nor does any answer of the API
    const info = JSON.stringify([await sandbox.getInfo(), await Secret.getInfo(secretName)]);
    expect(info).not.toContain(SECRET_V1);

    // a new version is used on the next request
    await Secret.update(secretName, SECRET_V2);
    expect((await echoed(sandbox)).headers.authorization).toBe(`Bearer ${SECRET_V2}`);

    // through a restart of the platform (sandboxes keep running and are adopted)
    await t.platform.close({ destroy: false });
    const again = await start(t);
    Object.assign(t, again);
    restoreEnv();
    restoreEnv = pointE2bClient(t);
    sandbox = await Sandbox.connect(sandbox.sandboxId);
    const afterRestart = await echoed(sandbox);
    expect(afterRestart.headers.authorization).toBe(`Bearer ${SECRET_V2}`);
    expect(afterRestart.headers["x-identity"]).toEqual(expect.any(String));
    expect(await insideHas(sandbox, SECRET_V2)).toBe(false);

    // deleted: the request fails closed, the placeholder never leaves
    const headerRequests = async () =>
      (await outside.log()).filter((e) => e.kind.endsWith("-headers")).length;
    const before = await headerRequests();
    expect(await Secret.destroy(secretName)).toBe(true);
    const refused = await echoed(sandbox);
    expect(refused.status).toBe("502");
    expect(await headerRequests()).toBe(before);
  });
});
