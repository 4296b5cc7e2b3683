import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { command } from "../../src/lib/command.js";

/**
 * A "fake internet" for network tests: a network namespace of the test's own, routed from the
 * host, holding public TEST-NET-2 addresses (198.51.100.0/24; never TEST-NET-1 or -3, which
 * this machine's own network uses) and private, CGNAT and link-local addresses that stand for
 * an operator's internal network. Servers inside (see fixtures/fake-internet-server.cjs)
 * answer HTTP on 80, HTTPS on 443 (a certificate for the zone's names from a CA of its own,
 * `caFile`), a line on TCP 2222, UDP echo on 7777 and DNS on 53, and log every connection;
 * `/headers` on 80 and 443 reflects the request's headers. Tests send
 * traffic only here and to loopback.
 *
 * `slot` (0-7) keeps test files apart: each gets its own /26 of public addresses and its own
 * private /24s. Slots 4-7 take theirs from 198.18.0.0/24 (RFC 2544's benchmarking range, no
 * more routed than TEST-NET), for files added after TEST-NET-2's four were taken.
 */
export class FakeInternet {
  readonly netns: string;
  readonly hostIf: string;
  private readonly base: number;
  /** The /24 the public addresses are in. */
  private readonly net: string;
  private server?: ChildProcess;
  private certDir?: string;
  private readonly routes: string[];

  constructor(
    readonly name: string,
    readonly slot: number,
    /** Names the DNS server answers (A records), e.g. {"allowed.test": fake.publicIp(10)}. */
    readonly zone: Record<string, string> = {},
  ) {
    if (!/^[a-z0-9]{1,8}$/.test(name)) throw new Error(`fake internet name must be short: ${name}`);
    if (!Number.isInteger(slot) || slot < 0 || slot > 7) throw new Error(`slot must be 0-7, got ${slot}`);
    this.netns = `${name}fi`;
    this.hostIf = `${name}fi0`;
    this.base = (slot % 4) * 64;
    this.net = slot < 4 ? "198.51.100" : "198.18.0";
    this.routes = [
      `${this.net}.${this.base}/26`,
      ...Object.values(this.privateNets()).map((ip) => `${ip.split(".").slice(0, 3).join(".")}.0/24`),
    ];
  }

  /** A public address (TEST-NET-2) inside, `n` from 1 to 59. */
  publicIp(n: number): string {
    if (n < 1 || n > 59) throw new Error(`public address ${n} is outside 1-59`);
    return `${this.net}.${this.base + n}`;
  }

  /** The address the host uses on its link to the fake internet: what masqueraded traffic comes from. */
  get hostIp(): string {
    return `${this.net}.${this.base + 61}`;
  }

  private get peerIp(): string {
    return `${this.net}.${this.base + 62}`;
  }

  /** The CA (PEM file) of the HTTPS server's certificate, while started. */
  get caFile(): string {
    if (!this.certDir) throw new Error("the fake internet is not started");
    return path.join(this.certDir, "ca.pem");
  }

  /** The DNS server's address. */
  get dnsIp(): string {
    return this.publicIp(53);
  }

  /** One server address in each internal range a sandbox must never reach. */
  privateNets(): Record<"rfc1918a" | "rfc1918b" | "rfc1918c" | "cgnat" | "linkLocal", string> {
    return {
      rfc1918a: `10.9.${this.slot}.10`,
      rfc1918b: `172.31.${this.slot}.10`,
      rfc1918c: `192.168.${200 + this.slot}.10`,
      cgnat: `100.127.${this.slot}.10`,
      linkLocal: `169.254.${77 + this.slot}.10`,
    };
  }

  async start(): Promise<void> {
    await this.stop();
    await command("ip", ["netns", "add", this.netns]);
    await command("ip", [
      "link",
      "add",
      this.hostIf,
      "type",
      "veth",
      "peer",
      "name",
      "eth0",
      "netns",
      this.netns,
    ]);
    await command("ip", ["-batch", "-"], {
      input: [
        `addr add ${this.hostIp}/30 dev ${this.hostIf}`,
        `link set ${this.hostIf} up`,
        ...this.routes.map((net) => `route add ${net} via ${this.peerIp} dev ${this.hostIf}`),
      ].join("\n"),
    });
    const inside = [this.publicIp(10), this.publicIp(11), this.publicIp(12), this.dnsIp];
    await command("ip", ["-n", this.netns, "-batch", "-"], {
      input: [
        "link set lo up",
        `addr add ${this.peerIp}/30 dev eth0`,
        "link set eth0 up",
        `route add default via ${this.hostIp}`,
        ...[...inside, ...Object.values(this.privateNets())].map((ip) => `addr add ${ip}/32 dev lo`),
      ].join("\n"),
    });
    // the HTTPS server's certificate, for every name of the zone, from a CA of its own (clients
    // inside use -k: it is SNI that matters; the platform's egress proxy is given `caFile`)
    this.certDir = mkdtempSync(path.join(os.tmpdir(), `${this.name}-fi-`));
    const file = (name: string) => path.join(this.certDir!, name);
    const EC = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "2"];
    await command("openssl", [
      "req",
      "-x509",
      ...EC,
      "-subj",
      "/CN=fake internet CA",
      "-addext",
      "basicConstraints=critical,CA:TRUE",
      "-addext",
      "keyUsage=critical,keyCertSign",
      "-keyout",
      file("ca.key"),
      "-out",
      file("ca.pem"),
    ]);
    const names = ["fake-internet", ...Object.keys(this.zone)];
    writeFileSync(
      file("leaf.cnf"),
      `[req]\ndistinguished_name=dn\nprompt=no\n[dn]\nCN=fake-internet\n[ext]\nsubjectAltName=${names.map((n) => `DNS:${n}`).join(",")}\nbasicConstraints=critical,CA:FALSE\nextendedKeyUsage=serverAuth\n`,
    );
    await command("openssl", [
      "req",
      "-x509",
      "-config",
      file("leaf.cnf"),
      "-extensions",
      "ext",
      ...EC,
      "-CA",
      file("ca.pem"),
      "-CAkey",
      file("ca.key"),
      "-keyout",
      file("key.pem"),
      "-out",
      file("cert.pem"),
    ]);
    const args = JSON.stringify({
      zone: this.zone,
      dnsIp: this.dnsIp,
      dnsPacket: require.resolve("dns-packet"),
      certDir: this.certDir,
      publicIps: inside,
    });
    const script = path.resolve(__dirname, "../fixtures/fake-internet-server.cjs");
    this.server = spawn("ip", ["netns", "exec", this.netns, process.execPath, script, args], {
      stdio: ["ignore", "ignore", "inherit"],
    });
    const deadline = Date.now() + 10_000;
    while ((await this.log().catch(() => undefined)) === undefined) {
      if (Date.now() > deadline) throw new Error("the fake internet's servers did not start");
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  /** Every connection and query the servers saw, oldest first. */
  async log(): Promise<Array<{ kind: string; local?: string; remote: string; name?: string }>> {
    const res = await fetch(`http://${this.publicIp(10)}/__log`, { signal: AbortSignal.timeout(1000) });
    return (await res.json()) as Array<{ kind: string; local?: string; remote: string; name?: string }>;
  }

  /** Removes the namespace (its veth and the host's routes go with it) and the servers. */
  async stop(): Promise<void> {
    const server = this.server;
    if (server && server.exitCode === null && server.signalCode === null) {
      const exited = new Promise((r) => server.once("exit", r));
      server.kill("SIGKILL");
      await exited;
    }
    this.server = undefined;
    await command("ip", ["netns", "pids", this.netns])
      .then(async (pids) => {
        for (const pid of pids.split("\n").filter(Boolean)) process.kill(Number(pid), "SIGKILL");
      })
      .catch(() => undefined);
    await command("ip", ["link", "delete", this.hostIf]).catch(() => undefined);
    await command("ip", ["netns", "delete", this.netns]).catch(() => undefined);
    if (this.certDir) rmSync(this.certDir, { recursive: true, force: true });
  }
}
