/**
 * What the egress proxy, which dials from the host itself, must never reach for a sandbox
 * (review M1), and the credentials it must never send in clear (review M8), through the public
 * e2b client, under both runtimes:
 * - with `--allow-internal` opening the whole sandbox pool, a sandbox whose 80/443 go to the
 *   egress proxy (a header transform) still cannot reach another sandbox's server;
 * - nor a listener on an address of the host (on a veth the test adds, then removes),
 *   and the kernel refuses the proxy's marked sockets there as well;
 * - a secret in a rule is not sent over plain HTTP (port 80) unless the rule opts in: the proxy
 *   answers 502 naming the placeholder, the origin sees nothing, and the decision log says why.
 */
import http from "node:http";
import type net from "node:net";
import { Sandbox, type SandboxOpts, Secret } from "e2b";
import { command } from "../../src/lib/command.js";
import { proxyMarkOf } from "../../src/network/firewall.js";
import { outboundConnector } from "../../src/network/outbound.js";
import { FakeInternet } from "../helpers/fake-internet.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { networkDecisionsHolding, runCommand } from "../helpers/sandbox-network.js";
import { testNetwork } from "../helpers/test-networks.js";

const outside = new FakeInternet("pa", 6);
const ORIGIN = outside.publicIp(10);
Object.assign(outside.zone, { "origin.test": ORIGIN });

/** An address of the host's own (RFC 2544 space no fake internet uses), on a veth of the test's. */
const HOST_IP = "198.18.1.77";
const DUMMY = `xpa${process.pid % 10000}`;
let hostServer: http.Server;

beforeAll(async () => {
  await outside.start();
  // a veth pair whose other end stays in the host too: the address is simply one of the host's
  await command("ip", ["link", "add", DUMMY, "type", "veth", "peer", "name", `${DUMMY}p`]);
  await command("ip", ["addr", "add", `${HOST_IP}/32`, "dev", DUMMY]);
  await command("ip", ["link", "set", DUMMY, "up"]);
  await command("ip", ["link", "set", `${DUMMY}p`, "up"]);
  hostServer = http.createServer((_req, res) => res.end("the host's own service\n"));
  await new Promise<void>((resolve) => hostServer.listen(80, HOST_IP, resolve));
});

afterAll(async () => {
  await new Promise((resolve) => (hostServer ? hostServer.close(resolve) : resolve(undefined)));
  await command("ip", ["link", "del", DUMMY]).catch(() => undefined);
  await outside.stop();
});

const run = (sandbox: Sandbox, cmd: string) => runCommand(sandbox, cmd, 30_000);
const SECRET = "topsecret-6c1f03";

describe.each(["runc", "runsc"] as const)(
  "what the egress proxy never reaches or leaks, on %s",
  (runtime) => {
    let t: TestPlatform;
    let restoreEnv = () => {};
    const network = testNetwork("t");
    const secretName = `plain-${runtime}`;
    const made: Sandbox[] = [];

    beforeAll(async () => {
      t = await startTestPlatform({
        runtime,
        networkPrefix: network.prefix,
        config: {
          networkCidr: network.cidr,
          // an operator opening far more than a mirror: the whole pool
          allowInternal: [network.cidr],
          dnsUpstreams: [outside.dnsIp],
          egressCaFiles: [outside.caFile],
        },
      });
      restoreEnv = pointE2bClient(t);
      await Secret.create(secretName, SECRET);
    });

    afterAll(async () => {
      for (const s of made) await s.kill().catch(() => false);
      await Secret.destroy(secretName).catch(() => false);
      restoreEnv();
      await t?.stop();
    });

    const create = async (opts: SandboxOpts) => {
      const sandbox = await Sandbox.create(opts);
      made.push(sandbox);
      return sandbox;
    };
    /** A sandbox whose TCP to ports 80 and 443 goes to the egress proxy (it has a header transform). */
    const proxied = () =>
      create({ network: { rules: { "example.com": [{ transform: { headers: { "X-P": "1" } } }] } } });

    it("never reaches another sandbox, even with the whole pool opened", async () => {
      const b = await create({ network: { allowPublicTraffic: false } });
      await b.commands.run("mkdir -p /tmp/www && echo sandbox-b-listing > /tmp/www/index.html", {
        user: "root",
      });
      await b.commands.run("cd /tmp/www && python3 -m http.server 80", {
        user: "root",
        background: true,
        timeoutMs: 0,
      });
      const ip = (await b.commands.run("hostname -I")).stdout.trim().split(/\s+/)[0]!;
      expect(ip).toMatch(/^10\.\d+\.\d+\.\d+$/);
      // it serves: from inside itself
      let served = "";
      for (let i = 0; i < 50 && !served.includes("sandbox-b-listing"); i++) {
        served = (await run(b, "curl -s -m 2 http://127.0.0.1/index.html")).stdout;
        if (!served.includes("sandbox-b-listing")) await new Promise((r) => setTimeout(r, 200));
      }
      expect(served).toContain("sandbox-b-listing");

      const a = await proxied();
      const tried = await run(a, `curl -s -m 5 http://${ip}/index.html`);
      expect(tried.stdout).not.toContain("sandbox-b-listing");
      expect(tried.exitCode).not.toBe(0);
      const log = await networkDecisionsHolding(
        t,
        a.sandboxId,
        expect.arrayContaining([
          expect.objectContaining({
            destination: ip,
            port: 80,
            verdict: "denied",
            rule: "sandbox pool (always denied)",
          }),
        ]),
      );
      expect(log).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ destination: ip, rule: "sandbox pool (always denied)" }),
        ]),
      );
    });

    it("never reaches an address of the host, and the kernel refuses the proxy's sockets there too", async () => {
      const a = await proxied();
      const tried = await run(a, `curl -s -m 5 http://${HOST_IP}/`);
      expect(tried.stdout).not.toContain("the host's own service");
      expect(tried.exitCode).not.toBe(0);
      const log = await networkDecisionsHolding(
        t,
        a.sandboxId,
        expect.arrayContaining([
          expect.objectContaining({
            destination: HOST_IP,
            verdict: "denied",
            rule: "host address (always denied)",
          }),
        ]),
      );
      expect(log).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ destination: HOST_IP, rule: "host address (always denied)" }),
        ]),
      );
      // the second opinion: a socket with the proxy's mark is refused by the firewall itself,
      // one without it (the test's own) is not
      const connectWith = (mark?: number) =>
        new Promise<string>((resolve) => {
          const socket: net.Socket = outboundConnector(mark)(HOST_IP, 80);
          socket.once("connect", () => {
            socket.destroy();
            resolve("connected");
          });
          socket.once("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
        });
      expect(await connectWith(proxyMarkOf(`${network.prefix}_net`))).toBe("ECONNREFUSED");
      expect(await connectWith()).toBe("connected");
    });

    it("does not send a secret over plain HTTP unless the rule allows it", async () => {
      const rule = (allowPlainHttp?: boolean) => ({
        "origin.test": [
          {
            transform: {
              headers: { Authorization: `Bearer ${Secret.fill(secretName)}` },
              ...(allowPlainHttp ? { allowPlainHttp } : {}),
            },
          },
        ],
      });
      const sandbox = await create({
        network: { allowOut: ["origin.test"], denyOut: ["0.0.0.0/0"], rules: rule() },
      });
      const seen = async () => (await outside.log()).filter((e) => e.kind.endsWith("-headers")).length;
      const before = await seen();
      const plain = await run(
        sandbox,
        "curl -s -m 8 -w '\\n%{http_code}' http://origin.test/headers </dev/null",
      );
      expect(plain.stdout).not.toContain(SECRET);
      expect(plain.stdout).toMatch(
        new RegExp(
          `\\$\\{e2b\\.secrets\\.${secretName}\\}, which is never sent over plain HTTP[\\s\\S]*\\n502$`,
        ),
      );
      expect(await seen()).toBe(before);
      await networkDecisionsHolding(
        t,
        sandbox.sandboxId,
        expect.arrayContaining([
          expect.objectContaining({
            verdict: "denied",
            name: "origin.test",
            port: 80,
            rule: expect.stringContaining("never sent over plain HTTP"),
          }),
        ]),
      ).then((log) =>
        expect(log).toEqual(
          expect.arrayContaining([
            expect.objectContaining({
              port: 80,
              rule: expect.stringContaining("never sent over plain HTTP"),
            }),
          ]),
        ),
      );
      // HTTPS gets it; and the rule can opt in to plain HTTP, as an extension
      const tls = await run(sandbox, "curl -s -m 8 https://origin.test/headers </dev/null");
      expect(JSON.parse(tls.stdout).headers.authorization).toBe(`Bearer ${SECRET}`);
      await sandbox.updateNetwork({ allowOut: ["origin.test"], denyOut: ["0.0.0.0/0"], rules: rule(true) });
      const allowed = await run(sandbox, "curl -s -m 8 http://origin.test/headers </dev/null");
      expect(JSON.parse(allowed.stdout).headers.authorization).toBe(`Bearer ${SECRET}`);
      expect((await sandbox.getInfo()).network?.rules).toEqual(rule(true));
    });
  },
);
