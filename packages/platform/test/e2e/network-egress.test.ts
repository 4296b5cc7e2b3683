/**
 * What a sandbox may reach, through the public e2b client under both runtimes, against a fake
 * internet of the test's own: public addresses yes (with internet), the operator's internal
 * networks never, whatever the sandbox asked for; DNS only through the platform's resolver.
 */
import { Sandbox } from "e2b";
import { FakeInternet } from "../helpers/fake-internet.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { runCommand } from "../helpers/sandbox-network.js";

const outside = new FakeInternet("eg", 0, { "allowed.test": "198.51.100.10" });
const { rfc1918b: OPENED, ...CLOSED } = outside.privateNets();

beforeAll(() => outside.start());
afterAll(() => outside.stop());

const run = (sandbox: Sandbox, cmd: string) => runCommand(sandbox, cmd);

describe.each(["runc", "runsc"] as const)("egress from %s sandboxes", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({
      runtime,
      config: { dnsUpstreams: [outside.dnsIp], allowInternal: [`${OPENED.replace(/\.\d+$/, ".0")}/24`] },
    });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t.stop();
  });

  it("reaches the internet, never a private, CGNAT or link-local address, and resolves through the platform", async () => {
    const sandbox = await Sandbox.create();
    try {
      const ok = await run(sandbox, "curl -sS -m 5 http://198.51.100.10/");
      expect(ok).toMatchObject({ exitCode: 0, stdout: `198.51.100.10 saw ${outside.hostIp}` });
      for (const [range, ip] of Object.entries(CLOSED)) {
        for (const url of [`http://${ip}/`, `telnet://${ip}:2222`]) {
          const r = await run(sandbox, `curl -sS -m 5 ${url} </dev/null`);
          expect({ range, url, exitCode: r.exitCode, stderr: r.stderr }).toMatchObject({
            exitCode: 7,
            stderr: expect.stringMatching(/Connection refused|Couldn't connect/),
          });
        }
      }
      const reached = (await outside.log()).filter((e) => Object.values(CLOSED).includes(e.local ?? ""));
      expect(reached).toEqual([]);
      // the one internal range the operator opened
      expect(await run(sandbox, `curl -sS -m 5 http://${OPENED}/`)).toMatchObject({
        exitCode: 0,
        stdout: `${OPENED} saw ${outside.hostIp}`,
      });
      expect((await run(sandbox, "getent hosts allowed.test")).stdout).toMatch(
        /^198\.51\.100\.10\s+allowed\.test/,
      );
      expect((await run(sandbox, "getent hosts missing.test")).exitCode).not.toBe(0);
      // whatever resolver the sandbox names, the platform answers
      const query =
        "import socket, struct; " +
        "q = struct.pack('>6H', 0x1234, 0x0100, 1, 0, 0, 0) + b''.join(bytes([len(p)]) + p.encode() for p in 'allowed.test'.split('.')) + bytes([0, 0, 1, 0, 1]); " +
        `s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3); s.sendto(q, ('${outside.publicIp(40)}', 53)); ` +
        "print(socket.inet_ntoa(s.recv(512)[-4:]))";
      const named = await run(sandbox, `python3 -c "${query}"`);
      expect(named).toMatchObject({ exitCode: 0, stdout: "198.51.100.10\n" });
    } finally {
      await sandbox.kill();
    }
  });

  it("without internet reaches nothing, DNS included", async () => {
    const sandbox = await Sandbox.create({ allowInternetAccess: false });
    try {
      const r = await run(sandbox, "curl -sS -m 5 http://198.51.100.10/");
      expect(r).toMatchObject({ exitCode: 7 });
      expect((await run(sandbox, "getent hosts allowed.test")).exitCode).not.toBe(0);
    } finally {
      await sandbox.kill();
    }
  });

  it("refuses a network update while the sandbox is paused (409), applies it once resumed", async () => {
    const sandbox = await Sandbox.create();
    try {
      await sandbox.pause();
      const res = await fetch(`${t.apiUrl}/sandboxes/${sandbox.sandboxId}/network`, {
        method: "PUT",
        headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ allow_internet_access: false }),
      });
      expect(res.status).toBe(409);
      expect(await res.json()).toMatchObject({ code: 409, message: expect.stringMatching(/paused/) });
      await expect(sandbox.updateNetwork({ allowInternetAccess: false })).rejects.toThrow(/409/);
      await Sandbox.connect(sandbox.sandboxId);
      await sandbox.updateNetwork({ allowInternetAccess: false });
      expect((await run(sandbox, "curl -sS -m 5 http://198.51.100.10/")).exitCode).toBe(7);
    } finally {
      await sandbox.kill();
    }
  });
});
