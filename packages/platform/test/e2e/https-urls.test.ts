/**
 * HTTPS sandbox URLs, as the client builds them (`sandbox.getHost(port)`): the proxy serves
 * them on its TLS port, HTTP/1.1 or h2 by ALPN, with a certificate signed by the local CA the
 * platform made; the DNS listener answers the sandbox domain with the proxy's address, so a
 * client that uses it as resolver opens the URL by name. Only loopback is used.
 */
import { execFile } from "node:child_process";
import { Resolver } from "node:dns/promises";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http2 from "node:http2";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { Sandbox } from "e2b";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

const DOMAIN = "sandboxes.test";
/** Where the DNS listener answers: port 53 (what resolv.conf can name), an address per jest worker. */
const DNS_ADDRESS = `127.53.0.${Number(process.env.JEST_WORKER_ID ?? 1) + Number(process.env.X_TEST_WORKER_OFFSET ?? 0)}`;
const ECHO_SERVER =
  'require("node:http").createServer((q, s) => s.end(JSON.stringify({ host: q.headers.host, proto: q.headers["x-forwarded-proto"] }))).listen(8080);';

let t: TestPlatform;
let restoreEnv = () => {};

beforeAll(async () => {
  t = await startTestPlatform({
    runtime: "runc",
    config: { tlsPort: 0, dnsListen: `${DNS_ADDRESS}:53`, domain: DOMAIN },
  });
  restoreEnv = pointE2bClient(t);
});

afterAll(async () => {
  restoreEnv();
  await t?.stop();
});

/** The addresses the platform's DNS listener gives a name. */
async function resolveByListener(name: string): Promise<string[]> {
  const resolver = new Resolver();
  resolver.setServers([DNS_ADDRESS]);
  return resolver.resolve4(name);
}

/** A GET to the HTTPS port for `host` (`name:port`, as getHost() gives it), by address. */
function get(host: string, urlPath: string, ca: Buffer): Promise<{ status: number; body: string }> {
  const servername = host.replace(/:\d+$/, "");
  return new Promise((resolve, reject) => {
    const req = https.get(
      {
        host: "127.0.0.1",
        servername,
        port: t.platform.tlsPort,
        path: urlPath,
        ca,
        headers: { host },
        agent: false,
      },
      (res) => {
        let body = "";
        res.on("data", (d) => {
          body += d;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on("error", reject);
  });
}

it("serves getHost() URLs over HTTPS with the local CA, HTTP/1.1 and h2, resolved by the DNS listener", async () => {
  expect(t.platform.tlsPort).toEqual(expect.any(Number));
  const ca = readFileSync(t.platform.caFile!);
  const sandbox = await Sandbox.create();
  try {
    await sandbox.files.write("/tmp/echo.js", ECHO_SERVER);
    await sandbox.commands.run("node /tmp/echo.js", { background: true });
    await sandbox.commands.run(
      "for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/8080) 2>/dev/null && exit 0; sleep 0.05; done; exit 1",
    );
    // the domain the client is told carries the HTTPS port, so its URLs reach it as built
    const host = sandbox.getHost(8080);
    expect(host).toBe(`8080-${sandbox.sandboxId}.${DOMAIN}:${t.platform.tlsPort}`);
    const name = host.replace(/:\d+$/, "");
    expect(await resolveByListener(name)).toEqual(["127.0.0.1"]);
    expect(await resolveByListener(DOMAIN)).toEqual(["127.0.0.1"]);
    await expect(resolveByListener("elsewhere.example")).rejects.toThrow(/REFUSED/);

    // HTTP/1.1 (no ALPN offer from this client): verified against the local CA
    const h1 = await get(host, "/", ca);
    expect(h1).toMatchObject({ status: 200, body: JSON.stringify({ host, proto: "https" }) });
    // envd's port answers there too
    expect((await get(`49983-${sandbox.sandboxId}.${DOMAIN}`, "/health", ca)).status).toBe(204);

    // h2, chosen by ALPN
    const session = http2.connect(`https://127.0.0.1:${t.platform.tlsPort}`, { ca, servername: name });
    try {
      const body = await new Promise<string>((resolve, reject) => {
        const stream = session.request({ ":path": "/", ":authority": host });
        let data = "";
        stream.on("data", (d) => {
          data += d;
        });
        stream.on("end", () => resolve(data));
        stream.on("error", reject);
      });
      expect(session.alpnProtocol).toBe("h2");
      expect(JSON.parse(body)).toEqual({ host, proto: "https" });
    } finally {
      session.close();
    }

    // a client that does not trust the CA is refused by TLS itself
    await expect(get(host, "/", Buffer.from(""))).rejects.toThrow(/certificate/);
  } finally {
    await sandbox.kill();
  }
});

it("the public client works over HTTPS alone: CA trusted by NODE_EXTRA_CA_CERTS, names from the DNS listener", async () => {
  // the client's own process, with the listener as its only resolver (a resolv.conf of its
  // own, bound in a private mount namespace) and no E2B_SANDBOX_URL: every envd call and the
  // user's fetch go to https://{port}-{id}.{domain} by name
  const scratch = mkdtempSync(path.join(os.tmpdir(), "x-https-client-"));
  try {
    const resolvConf = path.join(scratch, "resolv.conf");
    writeFileSync(resolvConf, `nameserver ${DNS_ADDRESS}\noptions timeout:2 attempts:1\n`);
    const script = path.resolve(__dirname, "../fixtures/https-client.cjs");
    const env: NodeJS.ProcessEnv = {
      PATH: process.env.PATH,
      NODE_PATH: path.resolve(__dirname, "../../node_modules"),
      NODE_EXTRA_CA_CERTS: t.platform.caFile,
      E2B_API_URL: t.apiUrl,
      E2B_API_KEY: t.apiKey,
      ECHO_SERVER,
    };
    const stdout = await new Promise<string>((resolve, reject) => {
      execFile(
        "unshare",
        [
          "--mount",
          "--propagation",
          "private",
          "sh",
          "-c",
          'mount --bind "$0" /etc/resolv.conf && exec node "$1"',
          resolvConf,
          script,
        ],
        { env, timeout: 120_000 },
        (err, out, errOut) => (err ? reject(new Error(`${err.message}\n${errOut}`)) : resolve(out)),
      );
    });
    const seen = JSON.parse(stdout);
    expect(seen).toMatchObject({
      echo: "over-https\n",
      file: ECHO_SERVER,
      refused: 403,
      served: 200,
      running: true,
    });
    expect(seen.host).toMatch(
      new RegExp(`^8080-[a-z0-9]+\\.${DOMAIN.replace(".", "\\.")}:${t.platform.tlsPort}$`),
    );
    expect(seen.body).toEqual({ host: seen.host, proto: "https" });
  } finally {
    rmSync(scratch, { recursive: true, force: true });
  }
});
