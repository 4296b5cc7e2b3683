import { type ChildProcess, spawn } from "node:child_process";
import { createServer, type Server } from "node:http";
import path from "node:path";
import { command } from "../../src/lib/command.js";
import { silentLogger } from "../../src/lib/log.js";
import { type EgressPolicy, OPEN_EGRESS } from "../../src/model/network.js";
import { EgressServices } from "../../src/network/egress.js";
import { ALWAYS_DENIED_IPV4 } from "../../src/network/firewall.js";
import { createNetworkManager, type SandboxNetwork } from "../../src/network/network-manager.js";
import { FakeInternet } from "../helpers/fake-internet.js";

const FIXTURE_DIR = path.resolve(__dirname, "../fixtures");

import { getJson, httpGet, waitFor } from "./support/http.js";
import { ENVD_PORT, FIXTURES } from "./support/sandbox-harness.js";

// The network layer without containers: plain processes in the sandbox netns stand in for
// sandboxes (the stand-in envd's /sh runs curl from inside). Needs root, iproute2 and nftables.

const PREFIX = "xn";
const outside = new FakeInternet(PREFIX, 1, { "allowed.test": "198.51.100.74" });
// the operator opens one internal range (a package mirror, say); the others stay closed
const OPENED = outside.privateNets().rfc1918b;
const network = createNetworkManager({
  prefix: PREFIX,
  cidr: "10.252.0.0/16",
  allowInternal: [`${OPENED.split(".").slice(0, 3).join(".")}.0/24`],
});
const egress = new EgressServices({
  network,
  upstreams: [{ host: outside.dnsIp, port: 53 }],
  log: silentLogger,
});
const OFF: EgressPolicy = { allowInternetAccess: false, allowOut: [], denyOut: [] };
/** Whether the kernel's firewall holds this sandbox with everything denied. */
const offline = async (net: SandboxNetwork) =>
  (await network.firewallEntry(net))?.rules.deny.includes("0.0.0.0/0") ?? false;
const HOST_SERVICE_PORT = 18_081;
const servers: ChildProcess[] = [];
let hostService: Server;

interface ShResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the stand-in envd inside a netns, as if it were that sandbox's envd. */
async function serveIn(net: SandboxNetwork): Promise<void> {
  const child = spawn("ip", ["netns", "exec", net.netns, process.execPath, `${FIXTURES}/stand-in-envd.cjs`], {
    stdio: "ignore",
  });
  servers.push(child);
  await waitFor(() => httpGet(`http://${net.sandboxIp}:${ENVD_PORT}/health`, 500), 5000);
}

function shIn(net: SandboxNetwork, cmd: string): Promise<ShResult> {
  const q = new URLSearchParams({ cmd });
  return getJson<ShResult>(`http://${net.sandboxIp}:${ENVD_PORT}/sh?${q}`, 10_000);
}

const curlFrom = (net: SandboxNetwork, url: string) => shIn(net, `curl -sS -m 3 ${url}`);

/** Asks `server` for `name` from inside the sandbox's network, over UDP or TCP. */
const resolveFrom = (net: SandboxNetwork, server: string, name: string, proto: "udp" | "tcp" = "udp") =>
  shIn(
    net,
    `${process.execPath} ${FIXTURE_DIR}/dns-query.cjs ${require.resolve("dns-packet")} ${server} ${name} ${proto}`,
  );

beforeAll(async () => {
  await network.sweep();
  await network.init(await egress.start());
  egress.watchFirewall();
  await outside.start();
  hostService = createServer((_req, res) => res.end("host service")).listen(HOST_SERVICE_PORT, "0.0.0.0");
}, 30_000);

afterAll(async () => {
  for (const s of servers) s.kill("SIGKILL");
  hostService?.close();
  await outside.stop();
  await egress.close();
  await network.sweep();
}, 30_000);

describe("sandbox networks", () => {
  let a: SandboxNetwork;
  let b: SandboxNetwork;

  beforeAll(async () => {
    a = await network.create("net-a", { egress: OFF });
    b = await network.create("net-b", { egress: OPEN_EGRESS });
    await serveIn(a);
    await serveIn(b);
  }, 30_000);

  afterAll(async () => {
    for (const s of servers.splice(0)) s.kill("SIGKILL");
    await network.destroy("net-a");
    await network.destroy("net-b");
  });

  test("each sandbox gets its own /30 with the host at .1", () => {
    expect([a.hostIp, a.sandboxIp, b.hostIp, b.sandboxIp]).toEqual([
      "10.252.0.1",
      "10.252.0.2",
      "10.252.0.5",
      "10.252.0.6",
    ]);
    expect(a.netns).toBe("xn-net-a");
    expect(a.hostIf).toBe("xnh0");
  });

  test("the host reaches a port inside a sandbox", async () => {
    expect((await httpGet(`http://${a.sandboxIp}:${ENVD_PORT}/health`)).status).toBe(200);
  });

  test("a sandbox is refused the host's own services", async () => {
    expect((await httpGet(`http://127.0.0.1:${HOST_SERVICE_PORT}/`)).body).toBe("host service");
    const r = await curlFrom(a, `http://${a.hostIp}:${HOST_SERVICE_PORT}/`);
    expect(r).toMatchObject({ code: 7, stdout: "" });
    const viaOther = await curlFrom(a, `http://${b.hostIp}:${HOST_SERVICE_PORT}/`);
    expect(viaOther).toMatchObject({ code: 7, stdout: "" });
  }, 30_000);

  test("a sandbox is refused another sandbox, whatever its internet setting", async () => {
    expect(await curlFrom(a, `http://${b.sandboxIp}:${ENVD_PORT}/health`)).toMatchObject({
      code: 7,
      stdout: "",
    });
    expect(await curlFrom(b, `http://${a.sandboxIp}:${ENVD_PORT}/health`)).toMatchObject({
      code: 7,
      stdout: "",
    });
  }, 30_000);

  test("internet is off by default, on is masqueraded, and it toggles live", async () => {
    const url = `http://${outside.publicIp(10)}/`;
    const seen = `${outside.publicIp(10)} saw ${outside.hostIp}`;
    expect(await offline(a)).toBe(true);
    expect(await curlFrom(a, url)).toMatchObject({ code: 7 });
    expect(await curlFrom(b, url)).toMatchObject({ code: 0, stdout: seen });

    await network.setEgress(a, OPEN_EGRESS);
    await network.setEgress(a, OPEN_EGRESS);
    expect(await offline(a)).toBe(false);
    expect(await curlFrom(a, url)).toMatchObject({ code: 0, stdout: seen });
    await network.setEgress(a, OFF);
    await network.setEgress(a, OFF);
    expect(await curlFrom(a, url)).toMatchObject({ code: 7 });
  }, 30_000);

  test("ICMP follows the address rules: denied addresses answer unreachable, allowed ones reply", async () => {
    const ping = (net: SandboxNetwork, ip: string) => shIn(net, `python3 ${FIXTURE_DIR}/icmp-ping.py ${ip}`);
    const [allowed, denied] = [outside.publicIp(10), outside.publicIp(11)];
    expect(await ping(b, denied)).toMatchObject({ code: 0, stdout: "reply\n" });
    await network.setEgress(b, { allowOut: [allowed], denyOut: ["0.0.0.0/0"] });
    try {
      expect(await ping(b, allowed)).toMatchObject({ code: 0, stdout: "reply\n" });
      expect(await ping(b, denied)).toMatchObject({ code: 1, stdout: "unreachable\n" });
      // and the private ranges, whatever the policy
      expect(await ping(b, outside.privateNets().rfc1918a)).toMatchObject({ stdout: "unreachable\n" });
    } finally {
      await network.setEgress(b, OPEN_EGRESS);
    }
  }, 30_000);

  test("private, CGNAT and link-local destinations are refused even with internet, and never reached", async () => {
    const { rfc1918b: _opened, ...closed } = outside.privateNets();
    for (const [range, ip] of Object.entries(closed)) {
      for (const url of [`http://${ip}/`, `telnet://${ip}:2222`]) {
        const r = await curlFrom(b, url);
        expect({ range, url, code: r.code, stderr: r.stderr }).toMatchObject({
          code: 7,
          stderr: expect.stringMatching(/Connection refused|Couldn't connect/),
        });
      }
    }
    const reached = (await outside.log()).filter((e) => Object.values(closed).includes(e.local ?? ""));
    expect(reached).toEqual([]);
    const ruleset = (await network.firewall.describe())?.replace(/\s+/g, " ");
    expect(ruleset).toContain(`elements = { ${ALWAYS_DENIED_IPV4.join(", ")} }`);
  }, 30_000);

  test("an internal range the operator opened is reachable with internet, not without", async () => {
    expect(await curlFrom(b, `http://${OPENED}/`)).toMatchObject({
      code: 0,
      stdout: `${OPENED} saw ${outside.hostIp}`,
    });
    expect(await curlFrom(a, `http://${OPENED}/`)).toMatchObject({ code: 7 });
  }, 30_000);

  test("DNS to any address goes to the platform's resolver, which answers nothing without internet", async () => {
    // an address of the fake internet where nothing answers DNS: only the redirect can answer
    const nobody = outside.publicIp(40);
    expect(await resolveFrom(b, nobody, "allowed.test")).toMatchObject({
      code: 0,
      stdout: "198.51.100.74\n",
    });
    expect(await resolveFrom(b, b.hostIp, "allowed.test")).toMatchObject({
      code: 0,
      stdout: "198.51.100.74\n",
    });
    expect(await resolveFrom(b, nobody, "allowed.test", "tcp")).toMatchObject({
      code: 0,
      stdout: "198.51.100.74\n",
    });
    expect(await resolveFrom(b, nobody, "missing.test")).toMatchObject({ code: 1, stdout: "NXDOMAIN\n" });
    // the upstream saw the forwarder (the host), never the sandbox itself
    const queries = (await outside.log()).filter((e) => e.kind.startsWith("dns"));
    expect(queries.length).toBeGreaterThan(0);
    expect(queries.every((q) => q.remote === outside.hostIp)).toBe(true);
    // without internet, the resolver refuses every name
    expect(await resolveFrom(a, nobody, "allowed.test")).toMatchObject({ code: 1, stdout: "REFUSED\n" });
  }, 30_000);

  test("a restarted manager reads the allocation back from the kernel", async () => {
    const again = createNetworkManager({ prefix: PREFIX, cidr: "10.252.0.0/16" });
    const nets = await again.list();
    expect(nets.map((n) => [n.id, n.slot]).sort()).toEqual([
      ["net-a", 0],
      ["net-b", 1],
    ]);
    expect(await again.get("net-b")).toEqual(b);
    expect(await again.firewallEntry(b)).toEqual({
      hostIf: b.hostIf,
      sandboxIp: b.sandboxIp,
      rules: expect.anything(),
    });
  });

  test("prepare restores addresses a runtime took away", async () => {
    await command("ip", ["-n", a.netns, "addr", "flush", "dev", "eth0"]);
    await expect(httpGet(`http://${a.sandboxIp}:${ENVD_PORT}/health`, 500)).rejects.toThrow();
    await network.prepare(a);
    await network.prepare(a);
    expect((await httpGet(`http://${a.sandboxIp}:${ENVD_PORT}/health`)).status).toBe(200);
  });

  test("destroy removes netns, veth and rule, and the slot is reused", async () => {
    const c = await network.create("net-c", { egress: OPEN_EGRESS });
    expect(c.slot).toBe(2);
    await network.destroy("net-c");
    await network.destroy("net-c");
    expect(await network.get("net-c")).toBeUndefined();
    expect((await command("ip", ["netns", "list"])).includes("xn-net-c")).toBe(false);
    expect(await network.firewallEntry(c)).toBeUndefined();
    const d = await network.create("net-d", { egress: OFF });
    expect(d.slot).toBe(2);
    await network.destroy("net-d");
  });

  test("ids that cannot name a netns are refused", async () => {
    await expect(network.create("../evil", { egress: OFF })).rejects.toThrow(/invalid sandbox id/);
  });
});

describe("sweep", () => {
  test("removes leftovers by prefix, keeps what it is told to, and leaves nothing else", async () => {
    await network.init();
    const keep = await network.create("keep-me", { egress: OPEN_EGRESS });
    await network.create("gone", { egress: OPEN_EGRESS });
    // half-made leftovers: a netns without a veth and a veth without an alias
    await command("ip", ["netns", "add", `${PREFIX}-orphan`]);
    await command("ip", ["link", "add", `${PREFIX}h999`, "type", "veth", "peer", "name", `${PREFIX}p999`]);

    const removed = await network.sweep(new Set(["keep-me"]));
    expect(removed.netns.sort()).toEqual([`${PREFIX}-gone`, `${PREFIX}-orphan`]);
    expect(removed.links.sort()).toEqual([`${PREFIX}h1`, `${PREFIX}h999`]);
    expect((await network.list()).map((n) => n.id)).toEqual(["keep-me"]);
    expect([...(await network.firewall.entries()).keys()]).toEqual([keep.hostIf]);

    await network.sweep();
    expect(await network.list()).toEqual([]);
    expect(await network.firewall.describe()).toBeNull();
    const netns = await command("ip", ["netns", "list"]);
    expect(netns.split("\n").filter((l) => l.startsWith(`${PREFIX}-`))).toEqual([]);
    const links = JSON.parse(await command("ip", ["-j", "link", "show"])) as Array<{ ifname: string }>;
    expect(links.filter((l) => /^xn(h|p)\d/.test(l.ifname))).toEqual([]);
  }, 30_000);
});
