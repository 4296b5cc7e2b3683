/**
 * Egress policies through the public e2b client, under both runtimes, against a fake internet
 * of the test's own (HTTP, HTTPS, raw TCP, UDP and DNS servers on TEST-NET-2 addresses):
 * allow and deny by IP and CIDR on every protocol, allowed names and wildcards on every TCP
 * port (SNI, Host, or the name the sandbox resolved), DNS that answers only allowed names,
 * /etc/hosts and `curl --resolve` gaining nothing, private ranges denied even when listed,
 * refusals that fail at once, live updates, the decision log, and the client's 400 messages.
 */
import { Sandbox } from "e2b";
import { FakeInternet } from "../helpers/fake-internet.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { networkDecisionsHolding, runCommand } from "../helpers/sandbox-network.js";

const outside = new FakeInternet("np", 3);
const ip = (n: number) => outside.publicIp(n);
const ALLOWED = ip(10);
const OTHER = ip(11);
const WILD = ip(12);
Object.assign(outside.zone, {
  "allowed.test": ALLOWED,
  "other.test": OTHER,
  "a.wild.test": WILD,
  "wild.test": WILD,
});
const PRIVATE = outside.privateNets().rfc1918a;

beforeAll(() => outside.start());
afterAll(() => outside.stop());

const run = (sandbox: Sandbox, cmd: string) => runCommand(sandbox, cmd, 30_000);

/** curl's exit code and output for a URL (extra curl flags first). */
async function curl(sandbox: Sandbox, url: string, flags = "") {
  const r = await run(sandbox, `curl -sS -k -m 8 ${flags} ${url} </dev/null`);
  return { exitCode: r.exitCode, stdout: r.stdout, stderr: r.stderr.trim() };
}

/** A UDP datagram to the echo server: "echo" when it came back, else the error. */
async function udp(sandbox: Sandbox, to: string) {
  const script =
    "import socket; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.settimeout(3); " +
    `s.connect(('${to}', 7777)); s.send(b'ping')\ntry:\n  s.recvfrom(64); print('echo')\nexcept Exception as e: print(type(e).__name__)`;
  return (await run(sandbox, `python3 -c "${script}"`)).stdout.trim();
}

describe.each(["runc", "runsc"] as const)("egress policy on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({ runtime, config: { dnsUpstreams: [outside.dnsIp] } });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t.stop();
  });

  it("allows and denies by address on TCP and UDP, allow beating deny, refusing at once", async () => {
    const sandbox = await Sandbox.create({
      network: { denyOut: ["0.0.0.0/0"], allowOut: [ALLOWED, `${PRIVATE}/32`] },
    });
    try {
      expect(await curl(sandbox, `http://${ALLOWED}/`)).toMatchObject({ exitCode: 0 });
      expect((await run(sandbox, `bash -c 'cat < /dev/tcp/${ALLOWED}/2222'`)).stdout).toMatch(/saw/);
      const denied = await curl(sandbox, `http://${OTHER}/`);
      expect(denied).toMatchObject({
        exitCode: 7,
        stderr: expect.stringMatching(/refused|Couldn't connect/i),
      });
      expect(await udp(sandbox, ALLOWED)).toBe("echo");
      expect(await udp(sandbox, OTHER)).toMatch(/ConnectionRefusedError|timeout/);
      // listed or not, a private address stays out of reach
      expect(await curl(sandbox, `http://${PRIVATE}/`)).toMatchObject({ exitCode: 7 });
      // with no allowed name, DNS answers nothing
      expect((await run(sandbox, "getent hosts allowed.test")).exitCode).not.toBe(0);

      const info = await sandbox.getInfo();
      expect(info.network).toMatchObject({ denyOut: ["0.0.0.0/0"], allowOut: [ALLOWED, `${PRIVATE}/32`] });

      // a deny list alone: only what it names is refused
      await sandbox.updateNetwork({ denyOut: [`${OTHER}/32`] });
      expect(await curl(sandbox, `http://${WILD}/`)).toMatchObject({ exitCode: 0 });
      expect(await curl(sandbox, `http://${OTHER}/`)).toMatchObject({ exitCode: 7 });
      // cleared: everything public again, without a restart
      await sandbox.updateNetwork({});
      expect(await curl(sandbox, `http://${OTHER}/`)).toMatchObject({ exitCode: 0 });
      expect((await sandbox.getInfo()).network?.denyOut).toBeUndefined();

      const logged = expect.arrayContaining([
        expect.objectContaining({
          protocol: "tcp",
          destination: ALLOWED,
          port: 80,
          verdict: "allowed",
          rule: `allowOut ${ALLOWED}/32`,
        }),
        expect.objectContaining({
          protocol: "tcp",
          destination: OTHER,
          port: 80,
          verdict: "denied",
          rule: "denyOut 0.0.0.0/0",
        }),
        expect.objectContaining({ protocol: "udp", destination: OTHER, port: 7777, verdict: "denied" }),
        expect.objectContaining({
          destination: PRIVATE,
          verdict: "denied",
          rule: expect.stringMatching(/private/),
        }),
        expect.objectContaining({ destination: OTHER, verdict: "denied", rule: `denyOut ${OTHER}/32` }),
        expect.objectContaining({ destination: OTHER, verdict: "allowed", rule: "default (not denied)" }),
      ]);
      expect(await networkDecisionsHolding(t, sandbox.sandboxId, logged)).toEqual(logged);
      // nothing the policy refused ever reached the fake internet
      const reached = (await outside.log()).filter((e) => e.local === PRIVATE);
      expect(reached).toEqual([]);
    } finally {
      await sandbox.kill();
    }
  });

  it("allows names and wildcards on every TCP port, dialled by name, and DNS only for them", async () => {
    const sandbox = await Sandbox.create({
      network: { denyOut: ["0.0.0.0/0"], allowOut: ["allowed.test", "*.wild.test"] },
    });
    const seenBefore = (await outside.log()).length;
    try {
      // HTTPS by SNI, HTTP by Host
      expect(await curl(sandbox, "https://allowed.test/")).toMatchObject({
        exitCode: 0,
        stdout: expect.stringMatching(new RegExp(`^${ALLOWED} saw .* for allowed\\.test$`)),
      });
      expect(await curl(sandbox, "http://a.wild.test/")).toMatchObject({ exitCode: 0 });
      // the apex of a wildcard is not covered, and DNS does not even answer it
      expect((await run(sandbox, "getent hosts wild.test")).exitCode).not.toBe(0);
      expect((await run(sandbox, "getent hosts other.test")).exitCode).not.toBe(0);
      expect((await run(sandbox, "getent hosts allowed.test")).stdout).toContain(ALLOWED);
      expect((await curl(sandbox, "http://wild.test/", `--resolve wild.test:80:${WILD}`)).exitCode).not.toBe(
        0,
      );
      // a server-first protocol on another port: the name the sandbox resolved
      expect((await run(sandbox, "bash -c 'cat < /dev/tcp/allowed.test/2222'")).stdout).toMatch(
        new RegExp(`^${ALLOWED} saw`),
      );
      // pointing an allowed name elsewhere gains nothing: only addresses the platform's DNS
      // gave for allowed names are let out by name, anything else is refused at once
      expect(
        await curl(sandbox, "https://allowed.test/", `--resolve allowed.test:443:${OTHER}`),
      ).toMatchObject({
        exitCode: 7,
      });
      await run(sandbox, `echo '${OTHER} allowed.test' | sudo tee -a /etc/hosts`);
      expect(await curl(sandbox, "http://allowed.test/")).toMatchObject({ exitCode: 7 });
      // a disallowed name sent to an allowed name's address (domain fronting) is reset, never served
      const fronted = await curl(sandbox, "https://other.test/", `--resolve other.test:443:${ALLOWED}`);
      expect(fronted.exitCode).not.toBe(0);
      expect(fronted.stdout).toBe("");
      const hostFronted = await curl(sandbox, `http://${ALLOWED}/`, "-H 'Host: other.test'");
      expect(hostFronted.exitCode).not.toBe(0);
      const logged = expect.arrayContaining([
        expect.objectContaining({ protocol: "dns", name: "other.test", verdict: "denied" }),
        expect.objectContaining({ protocol: "dns", name: "allowed.test", verdict: "allowed" }),
        expect.objectContaining({
          protocol: "tcp",
          name: "allowed.test",
          port: 443,
          verdict: "allowed",
          rule: "allowOut allowed.test",
        }),
        expect.objectContaining({ name: "a.wild.test", verdict: "allowed", rule: "allowOut *.wild.test" }),
        expect.objectContaining({ name: "allowed.test", port: 2222, verdict: "allowed" }),
        expect.objectContaining({ name: "other.test", port: 443, destination: ALLOWED, verdict: "denied" }),
        expect.objectContaining({ protocol: "tcp", destination: OTHER, port: 443, verdict: "denied" }),
      ]);
      expect(await networkDecisionsHolding(t, sandbox.sandboxId, logged)).toEqual(logged);
      // what was refused never reached a server: the other one, or the allowed one under another name
      expect((await outside.log()).slice(seenBefore).filter((e) => e.local === OTHER)).toEqual([]);
    } finally {
      await sandbox.kill();
    }
  });

  it("answers the client's 400s for bad policies", async () => {
    await expect(Sandbox.create({ network: { denyOut: ["example.com"] } })).rejects.toThrow(
      /invalid denied CIDR example.com/,
    );
    await expect(Sandbox.create({ network: { allowOut: ["a.com"] } })).rejects.toThrow(
      /you must include 'ALL_TRAFFIC' in deny out/,
    );
    await expect(
      Sandbox.create({ network: { allowOut: ["0.0.0.0"], denyOut: ["0.0.0.0/0"] } }),
    ).rejects.toThrow(/invalid allowed address 0.0.0.0/);
    // internet off is also the "everything else denied" that names need
    const sandbox = await Sandbox.create({
      allowInternetAccess: false,
      network: { allowOut: ["allowed.test"] },
    });
    try {
      expect(await curl(sandbox, "http://allowed.test/")).toMatchObject({ exitCode: 0 });
      // an address no allowed name gave: refused at once, like any denied address
      expect(await curl(sandbox, `http://${OTHER}/`)).toMatchObject({ exitCode: 7 });
      const info = await sandbox.getInfo();
      expect(info.allowInternetAccess).toBe(false);
      expect(info.network).toMatchObject({ allowOut: ["allowed.test"] });
    } finally {
      await sandbox.kill();
    }
  });
});
