/**
 * A sandbox's own SOCKS5 proxy (`network.egressProxy`) through the public e2b client, under
 * both runtimes, against a fake internet of the test's own holding SOCKS5 servers
 * (fixtures/socks5-server.cjs: one open, one asking for a username and password) that log
 * what they are asked for, and Debian's Dante without authentication, as users run it: HTTP,
 * HTTPS and other TCP reach the echo server from the SOCKS server's address, by name
 * (ATYP=domain) when an allowed name decided, else by the address they were let out by (so a
 * proxy whose resolver knows none of the names carries them); wrong credentials or a stopped
 * proxy fail the sandbox's connection and nothing goes out directly; what is denied stays
 * denied; the password is never shown; an update without the proxy sends traffic directly
 * again; header transforms still apply, their upstream through the proxy; the proxy and its
 * password kept across pause and resume; E2B's 400s for private, loopback and malformed proxies.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Sandbox } from "e2b";
import { command } from "../../src/lib/command.js";
import { FakeInternet } from "../helpers/fake-internet.js";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { networkDecisions, runCommand } from "../helpers/sandbox-network.js";

const outside = new FakeInternet("sk", 5);
const ECHO = outside.publicIp(10);
const OTHER = outside.publicIp(11);
const SOCKS = outside.publicIp(20);
const zone = { "echo.test": ECHO, "other.test": OTHER, "socks.test": SOCKS };
Object.assign(outside.zone, zone);
const { rfc1918b: OPENED } = outside.privateNets();
const PASSWORD = "pw-Zq81-never-shown";

interface SocksEntry {
  from?: string;
  atyp?: string;
  host?: string;
  port?: number;
  user?: string | null;
  result?: string;
}

/** A SOCKS5 server inside the fake internet, on SOCKS:port, connecting out from SOCKS. */
class SocksServer {
  readonly entries: SocksEntry[] = [];
  private child?: ChildProcess;

  constructor(
    readonly port: number,
    readonly auth?: { username: string; password: string },
  ) {}

  async start(): Promise<void> {
    const args = JSON.stringify({ listen: SOCKS, port: this.port, bind: SOCKS, zone, ...this.auth });
    const script = path.resolve(__dirname, "../fixtures/socks5-server.cjs");
    const child = spawn("ip", ["netns", "exec", outside.netns, process.execPath, script, args], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    this.child = child;
    let pending = "";
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error("the SOCKS5 server did not start")), 10_000);
      child.stdout!.on("data", (chunk: Buffer) => {
        pending += chunk.toString();
        const lines = pending.split("\n");
        pending = lines.pop() ?? "";
        for (const line of lines) {
          const entry = JSON.parse(line) as SocksEntry & { listening?: string };
          if (entry.listening) {
            clearTimeout(timer);
            resolve();
          } else this.entries.push(entry);
        }
      });
      child.once("exit", () => reject(new Error("the SOCKS5 server exited")));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((r) => child.once("exit", r));
    child.kill("SIGKILL");
    await exited;
  }
}

/**
 * Debian's Dante (`danted`, dante-server), open (no authentication), on SOCKS:port inside the
 * fake internet, connecting out from SOCKS. It resolves names itself, with a resolver that
 * knows none of the zone's (nothing answers at 127.0.0.1 there: a resolv.conf of its own,
 * bound over /etc/resolv.conf in the mount namespace `ip netns exec` gives it), as a proxy on
 * another network whose DNS does not know a name the platform's does.
 */
class Dante {
  private child?: ChildProcess;
  private dir?: string;
  log = "";

  constructor(readonly port: number) {}

  async start(): Promise<void> {
    const dir = mkdtempSync(path.join(os.tmpdir(), "sk-dante-"));
    this.dir = dir;
    writeFileSync(path.join(dir, "resolv.conf"), "nameserver 127.0.0.1\n");
    writeFileSync(
      path.join(dir, "danted.conf"),
      [
        "logoutput: stderr",
        `internal: ${SOCKS} port = ${this.port}`,
        `external: ${SOCKS}`,
        "clientmethod: none",
        "socksmethod: none",
        "user.privileged: root",
        "user.unprivileged: nobody",
        "client pass {\n  from: 0.0.0.0/0 to: 0.0.0.0/0\n  log: error\n}",
        "socks pass {\n  from: 0.0.0.0/0 to: 0.0.0.0/0\n  command: connect\n  log: connect error\n}",
        "",
      ].join("\n"),
    );
    const script = `mount --bind ${dir}/resolv.conf /etc/resolv.conf && exec danted -f ${dir}/danted.conf -p ${dir}/danted.pid`;
    const child = spawn("ip", ["netns", "exec", outside.netns, "sh", "-c", script], {
      stdio: ["ignore", "ignore", "pipe"],
    });
    this.child = child;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`Dante did not start: ${this.log}`)), 10_000);
      child.stderr!.on("data", (chunk: Buffer) => {
        this.log += chunk.toString();
        if (/Dante\/server\S* v[\d.]+ running/.test(this.log)) {
          clearTimeout(timer);
          resolve();
        }
      });
      child.once("exit", () => reject(new Error(`Dante exited: ${this.log}`)));
    });
  }

  async stop(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    if (child && child.exitCode === null && child.signalCode === null) {
      const exited = new Promise((r) => child.once("exit", r));
      // danted's children follow their parent on SIGTERM
      child.kill("SIGTERM");
      await exited;
    }
    if (this.dir) rmSync(this.dir, { recursive: true, force: true });
    this.dir = undefined;
  }
}

const open = new SocksServer(1080);
const guarded = new SocksServer(1081, { username: "alice", password: PASSWORD });
const dante = new Dante(1082);

beforeAll(async () => {
  await outside.start();
  await command("ip", ["-n", outside.netns, "addr", "add", `${SOCKS}/32`, "dev", "lo"]);
  await open.start();
  await guarded.start();
  await dante.start();
});
afterAll(async () => {
  await dante.stop();
  await open.stop();
  await guarded.stop();
  await outside.stop();
});

const run = (sandbox: Sandbox, cmd: string) => runCommand(sandbox, cmd, 30_000);

/** Connections the echo servers saw (HTTP, HTTPS, TCP) from an address. */
const seenFrom = async (remote: string) =>
  (await outside.log()).filter((e) => e.kind !== "dns" && e.kind !== "dns-tcp" && e.remote === remote).length;

describe.each(["runc", "runsc"] as const)("SOCKS5 egress proxy on %s", (runtime) => {
  let t: TestPlatform;
  let restoreEnv = () => {};

  beforeAll(async () => {
    t = await startTestPlatform({
      runtime,
      config: {
        dnsUpstreams: [outside.dnsIp],
        allowInternal: [`${OPENED.replace(/\.\d+$/, ".0")}/24`],
        egressCaFiles: [outside.caFile],
      },
    });
    restoreEnv = pointE2bClient(t);
  });

  afterAll(async () => {
    restoreEnv();
    await t.stop();
  });

  it("tunnels HTTP, HTTPS and other TCP through the proxy, by address unless an allowed name decided; fails closed when it stops; an update without it goes direct", async () => {
    const sandbox = await Sandbox.create({ network: { egressProxy: { address: "SOCKS.test:1080" } } });
    try {
      const info = await sandbox.getInfo();
      expect(info.network?.egressProxy).toEqual({ address: "socks.test:1080" });
      const direct = await seenFrom(outside.hostIp);
      const before = open.entries.length;

      expect(await run(sandbox, "curl -sS -m 8 http://echo.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${ECHO} saw ${SOCKS}`,
      });
      expect(await run(sandbox, "curl -sSk -m 8 https://echo.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${ECHO} saw ${SOCKS} for echo.test`,
      });
      // by address, and on a port that is neither 80 nor 443
      const line = `import socket; s = socket.create_connection(('${OTHER}', 2222), 8); print(s.recv(100).decode().strip())`;
      expect(await run(sandbox, `python3 -c "${line}"`)).toMatchObject({
        exitCode: 0,
        stdout: `${OTHER} saw ${SOCKS}\n`,
      });
      const asked = open.entries.slice(before).map(({ atyp, host, port, from, result }) => ({
        atyp,
        host,
        port,
        from,
        result,
      }));
      // let out by their addresses, they go to those addresses, whatever name they carry
      expect(asked).toEqual([
        { atyp: "ipv4", host: ECHO, port: 80, from: outside.hostIp, result: "connected" },
        { atyp: "ipv4", host: ECHO, port: 443, from: outside.hostIp, result: "connected" },
        { atyp: "ipv4", host: OTHER, port: 2222, from: outside.hostIp, result: "connected" },
      ]);
      expect(await seenFrom(outside.hostIp)).toBe(direct);
      const decisions = await networkDecisions(t, sandbox.sandboxId);
      expect(decisions).toContainEqual(
        expect.objectContaining({
          name: "echo.test",
          port: 443,
          verdict: "allowed",
          rule: expect.stringMatching(/via SOCKS5 socks\.test:1080$/),
        }),
      );

      // let out by an allowed name, by that name (ATYP=domain): the proxy resolves it
      await sandbox.updateNetwork({
        allowOut: ["echo.test"],
        denyOut: ["0.0.0.0/0"],
        egressProxy: { address: "socks.test:1080" },
      });
      expect(await run(sandbox, "curl -sS -m 8 http://echo.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${ECHO} saw ${SOCKS}`,
      });
      expect(open.entries.at(-1)).toMatchObject({ atyp: "domain", host: "echo.test", port: 80 });

      // the proxy stopped: the connection fails, nothing is sent directly
      await open.stop();
      try {
        const r = await run(sandbox, "curl -sS -m 8 http://echo.test/");
        expect(r.exitCode).not.toBe(0);
        expect(await seenFrom(outside.hostIp)).toBe(direct);
        expect(await networkDecisions(t, sandbox.sandboxId)).toContainEqual(
          expect.objectContaining({
            name: "echo.test",
            verdict: "denied",
            rule: expect.stringMatching(/the SOCKS5 proxy socks\.test:1080 failed/),
          }),
        );
      } finally {
        await open.start();
      }

      // an update without the proxy clears tunnelling
      await sandbox.updateNetwork({});
      expect((await sandbox.getInfo()).network?.egressProxy).toBeUndefined();
      expect(await run(sandbox, "curl -sS -m 8 http://echo.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${ECHO} saw ${outside.hostIp}`,
      });
    } finally {
      await sandbox.kill();
    }
  });

  it("tunnels HTTP, HTTPS and other TCP through an open Dante (no authentication) whose resolver knows none of the names", async () => {
    // what its address let out goes to that address: the proxy is never asked to resolve a
    // name it only carries (the HTTP Host, the TLS SNI), which this Dante could not
    const sandbox = await Sandbox.create({ network: { egressProxy: { address: "socks.test:1082" } } });
    try {
      const direct = await seenFrom(outside.hostIp);
      expect(await run(sandbox, "curl -sS -m 8 http://echo.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${ECHO} saw ${SOCKS}`,
      });
      expect(await run(sandbox, "curl -sSk -m 8 https://echo.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${ECHO} saw ${SOCKS} for echo.test`,
      });
      const line = `import socket; s = socket.create_connection(('${OTHER}', 2222), 8); print(s.recv(100).decode().strip())`;
      expect(await run(sandbox, `python3 -c "${line}"`)).toMatchObject({
        exitCode: 0,
        stdout: `${OTHER} saw ${SOCKS}\n`,
      });
      expect(await seenFrom(outside.hostIp)).toBe(direct);
      expect(await networkDecisions(t, sandbox.sandboxId)).toContainEqual(
        expect.objectContaining({
          name: "echo.test",
          port: 80,
          verdict: "allowed",
          rule: "default (not denied), via SOCKS5 socks.test:1082",
        }),
      );

      // a name that decided is the proxy's to resolve (E2B's remote DNS): this one cannot, so
      // the connection fails closed, and nothing goes out directly
      await sandbox.updateNetwork({
        allowOut: ["echo.test"],
        denyOut: ["0.0.0.0/0"],
        egressProxy: { address: "socks.test:1082" },
      });
      expect((await run(sandbox, "curl -sS -m 8 http://echo.test/")).exitCode).not.toBe(0);
      expect(await seenFrom(outside.hostIp)).toBe(direct);
      expect(dante.log).toMatch(/could not resolve hostname "echo\.test"/);
      expect(await networkDecisions(t, sandbox.sandboxId)).toContainEqual(
        expect.objectContaining({
          name: "echo.test",
          verdict: "denied",
          rule: expect.stringMatching(
            /^allowOut echo\.test, but the SOCKS5 proxy socks\.test:1082 failed: .*HostUnreachable/,
          ),
        }),
      );
    } finally {
      await sandbox.kill();
    }
  });

  it("sends the username and password, never shows the password, fails closed on wrong ones, keeps denials", async () => {
    const sandbox = await Sandbox.create({
      network: {
        denyOut: [OTHER],
        egressProxy: { address: `${SOCKS}:1081`, username: "alice", password: PASSWORD },
      },
    });
    try {
      const direct = await seenFrom(outside.hostIp);
      expect(await run(sandbox, "curl -sS -m 8 http://echo.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${ECHO} saw ${SOCKS}`,
      });
      expect(guarded.entries.at(-1)).toMatchObject({ user: "alice", result: "connected", port: 80 });
      // with an address denied, a name is not sent for the proxy to resolve: the address is
      expect(guarded.entries.at(-1)).toMatchObject({ atyp: "ipv4", host: ECHO });
      // denied stays denied: refused before any proxy is asked
      const asked = guarded.entries.length;
      expect((await run(sandbox, `curl -sS -m 8 http://${OTHER}/`)).exitCode).not.toBe(0);
      expect(guarded.entries.length).toBe(asked);

      expect((await sandbox.getInfo()).network?.egressProxy).toEqual({
        address: `${SOCKS}:1081`,
        username: "alice",
      });
      const raw = await fetch(`${t.apiUrl}/sandboxes/${sandbox.sandboxId}`, {
        headers: { "X-API-Key": t.apiKey },
      });
      const body = await raw.text();
      expect(JSON.parse(body).network.egressProxy).toEqual({ address: `${SOCKS}:1081`, username: "alice" });
      expect(body).not.toContain(PASSWORD);

      // wrong credentials: the connection fails, nothing goes out directly
      await sandbox.updateNetwork({
        denyOut: [OTHER],
        egressProxy: { address: `${SOCKS}:1081`, username: "alice", password: "wrong" },
      });
      expect((await run(sandbox, "curl -sS -m 8 http://echo.test/")).exitCode).not.toBe(0);
      expect(guarded.entries.at(-1)).toMatchObject({ user: "alice", result: "bad credentials" });
      expect(await seenFrom(outside.hostIp)).toBe(direct);
      const decisions = JSON.stringify(await networkDecisions(t, sandbox.sandboxId));
      expect(decisions).toMatch(/the SOCKS5 proxy 198\.18\.0\.84:1081 failed/);
      expect(decisions).not.toContain(PASSWORD);
      expect(decisions).not.toContain("wrong");
    } finally {
      await sandbox.kill();
    }
  });

  it("applies header transforms through the proxy, and keeps the proxy and its password across pause and resume", async () => {
    const sandbox = await Sandbox.create({
      network: {
        rules: { "echo.test": [{ transform: { headers: { "X-Test-Token": "through-socks" } } }] },
        egressProxy: { address: `socks.test:1081`, username: "alice", password: PASSWORD },
      },
    });
    try {
      const direct = await seenFrom(outside.hostIp);
      const headers = async () => {
        const r = await run(sandbox, "curl -sS -m 8 https://echo.test/headers");
        expect({ exitCode: r.exitCode, stderr: r.stderr }).toEqual({ exitCode: 0, stderr: "" });
        return (JSON.parse(r.stdout) as { headers: Record<string, string> }).headers;
      };
      expect((await headers())["x-test-token"]).toBe("through-socks");
      const intercepted = (await outside.log()).filter((e) => e.kind === "https-headers").at(-1);
      expect(intercepted).toMatchObject({ remote: SOCKS, name: "echo.test" });
      expect(guarded.entries.at(-1)).toMatchObject({
        atyp: "ipv4",
        host: ECHO,
        port: 443,
        user: "alice",
        result: "connected",
      });

      await sandbox.pause();
      await Sandbox.connect(sandbox.sandboxId);
      expect((await headers())["x-test-token"]).toBe("through-socks");
      expect(await run(sandbox, "curl -sS -m 8 http://other.test/")).toMatchObject({
        exitCode: 0,
        stdout: `${OTHER} saw ${SOCKS}`,
      });
      expect(guarded.entries.at(-1)).toMatchObject({
        host: OTHER,
        user: "alice",
        result: "connected",
      });
      expect(await seenFrom(outside.hostIp)).toBe(direct);
      expect((await sandbox.getInfo()).network?.egressProxy).toEqual({
        address: "socks.test:1081",
        username: "alice",
      });
    } finally {
      await sandbox.kill();
    }
  });

  it("refuses private, loopback and malformed proxies with E2B's 400s", async () => {
    const refusals: Array<[Record<string, unknown>, RegExp]> = [
      [{ address: "127.0.0.1:1080" }, /internal \/ denied IP range: 127\.0\.0\.1 resolves to 127\.0\.0\.1/],
      [{ address: "10.9.5.10:1080" }, /internal \/ denied IP range/],
      [{ address: "100.64.0.1:1080" }, /internal \/ denied IP range/],
      [{ address: "socks.test" }, /must be in host:port form/],
      [{ address: "socks.test:70000" }, /port "70000" is not a valid 1-65535 value/],
      [{ address: "nowhere.test:1080" }, /resolve egress proxy host "nowhere\.test"/],
      [{ address: "socks.test:1080", password: PASSWORD }, /password must be empty when username is empty/],
    ];
    for (const [egressProxy, message] of refusals) {
      const res = await fetch(`${t.apiUrl}/v2/sandboxes`, {
        method: "POST",
        headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
        body: JSON.stringify({ templateID: "base", network: { egressProxy } }),
      });
      const body = await res.text();
      expect({ egressProxy, status: res.status }).toEqual({ egressProxy, status: 400 });
      expect(JSON.parse(body).message).toMatch(/^Invalid egress proxy config: /);
      expect(JSON.parse(body).message).toMatch(message);
      expect(body).not.toContain(PASSWORD);
    }
    await expect(Sandbox.create({ network: { egressProxy: { address: "127.0.0.1:1080" } } })).rejects.toThrow(
      /400: Invalid egress proxy config/,
    );
    // the internal range the operator opened is allowed
    const sandbox = await Sandbox.create({ network: { egressProxy: { address: `${OPENED}:1080` } } });
    try {
      await expect(
        sandbox.updateNetwork({ egressProxy: { address: "192.168.0.1:1080" } } as never),
      ).rejects.toThrow(/400: Invalid egress proxy config/);
      expect((await sandbox.getInfo()).network?.egressProxy).toEqual({ address: `${OPENED}:1080` });
    } finally {
      await sandbox.kill();
    }
  });
});
