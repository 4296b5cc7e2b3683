/**
 * How a sandbox's own URLs are served, through the public e2b client and the real proxy:
 * private sandboxes (`allowPublicTraffic: false`) answer every port but envd's only with
 * their traffic access token (the hosted service's 403 bodies otherwise), the token stays
 * across pause and resume, each fork has its own, and traffic without it wakes nobody;
 * `maskRequestHost` is the Host the sandbox's server sees; `httpsPorts` are reached over TLS.
 */
import { Sandbox } from "e2b";
import { pointE2bClient, startTestPlatform, type TestPlatform } from "../helpers/platform.js";

const SERVER = `
const http = require("node:http"), https = require("node:https"), fs = require("node:fs");
const echo = (req, res) => res.end(JSON.stringify({ host: req.headers.host, tls: !!req.socket.encrypted }));
http.createServer(echo).listen(8080);
https.createServer({ key: fs.readFileSync("/tmp/key.pem"), cert: fs.readFileSync("/tmp/cert.pem") }, echo).listen(8443);
`;

let t: TestPlatform;
let restoreEnv = () => {};

beforeAll(async () => {
  t = await startTestPlatform({ runtime: "runc" });
  restoreEnv = pointE2bClient(t);
});

afterAll(async () => {
  restoreEnv();
  await t.stop();
});

/** Starts the echo servers (HTTP 8080, HTTPS 8443 with a self-signed certificate). */
async function serve(sandbox: Sandbox): Promise<void> {
  await sandbox.files.write("/tmp/server.js", SERVER);
  await sandbox.commands.run(
    "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 -subj /CN=inside " +
      "-keyout /tmp/key.pem -out /tmp/cert.pem 2>/dev/null",
  );
  await sandbox.commands.run("node /tmp/server.js", { background: true });
  await sandbox.commands.run(
    "for i in $(seq 100); do (echo > /dev/tcp/127.0.0.1/8443) 2>/dev/null && exit 0; sleep 0.05; done; exit 1",
  );
}

/** A request through the proxy to a port of the sandbox, routed by headers. */
async function viaProxy(sandboxId: string, port: number, headers: Record<string, string> = {}) {
  const res = await fetch(`${t.proxyUrl}/`, {
    headers: { "E2b-Sandbox-Id": sandboxId, "E2b-Sandbox-Port": String(port), ...headers },
  });
  return { status: res.status, body: await res.json().catch(() => undefined) };
}

describe("private sandboxes", () => {
  it("answer every port but envd's only with their token, which outlives a pause; forks have their own", async () => {
    const open = await Sandbox.create();
    const sandbox = await Sandbox.create({ network: { allowPublicTraffic: false } });
    try {
      expect(open.trafficAccessToken).toBeUndefined();
      const token = sandbox.trafficAccessToken!;
      expect(token).toEqual(expect.any(String));
      expect((await sandbox.getInfo()).network).toMatchObject({ allowPublicTraffic: false });
      await serve(sandbox);

      expect(await viaProxy(sandbox.sandboxId, 8080)).toEqual({
        status: 403,
        body: {
          sandboxId: sandbox.sandboxId,
          message:
            "Sandbox is secured with traffic access token. Token header 'e2b-traffic-access-token' is missing",
          code: 403,
        },
      });
      expect(await viaProxy(sandbox.sandboxId, 8080, { "e2b-traffic-access-token": `${token}x` })).toEqual({
        status: 403,
        body: {
          sandboxId: sandbox.sandboxId,
          message:
            "Sandbox is secured with traffic access token. Provided token in header 'e2b-traffic-access-token' is invalid",
          code: 403,
        },
      });
      expect(await viaProxy(sandbox.sandboxId, 8080, { "e2b-traffic-access-token": token })).toMatchObject({
        status: 200,
      });
      // envd has its own token: the client keeps working
      expect((await sandbox.commands.run("echo ok")).stdout).toBe("ok\n");

      await sandbox.pause();
      const again = await Sandbox.connect(sandbox.sandboxId);
      expect(again.trafficAccessToken).toBe(token);

      const [fork] = await forkOf(sandbox.sandboxId);
      expect(fork?.trafficAccessToken).toEqual(expect.any(String));
      expect(fork?.trafficAccessToken).not.toBe(token);
      await Sandbox.kill(fork!.sandboxID);
    } finally {
      await sandbox.kill();
      await open.kill();
    }
  });

  it("wake from a pause on traffic only with their token", async () => {
    const sandbox = await Sandbox.create({
      network: { allowPublicTraffic: false },
      lifecycle: { onTimeout: "pause", autoResume: true },
    });
    try {
      const token = sandbox.trafficAccessToken!;
      await serve(sandbox);
      await sandbox.pause();
      const refused = await viaProxy(sandbox.sandboxId, 8080);
      expect(refused).toEqual({
        status: 403,
        body: {
          sandboxId: sandbox.sandboxId,
          message:
            "This sandbox can't be resumed with the credentials provided. Check your access token and try again.",
          code: 403,
        },
      });
      expect((await sandbox.getInfo()).state).toBe("paused");
      // with the token it wakes (its processes were kept: the frozen server answers)
      expect(await viaProxy(sandbox.sandboxId, 8080, { "e2b-traffic-access-token": token })).toMatchObject({
        status: 200,
      });
      expect((await sandbox.getInfo()).state).toBe("running");
    } finally {
      await sandbox.kill();
    }
  });
});

describe("maskRequestHost and httpsPorts", () => {
  it("send the masked Host upstream and speak TLS to HTTPS ports", async () => {
    const sandbox = await Sandbox.create({
      network: { maskRequestHost: "internal.example:${PORT}", httpsPorts: [8443] },
    });
    try {
      await serve(sandbox);
      expect(await viaProxy(sandbox.sandboxId, 8080)).toEqual({
        status: 200,
        body: { host: "internal.example:8080", tls: false },
      });
      expect(await viaProxy(sandbox.sandboxId, 8443)).toEqual({
        status: 200,
        body: { host: "internal.example:8443", tls: true },
      });
      expect((await sandbox.getInfo()).network).toMatchObject({
        maskRequestHost: "internal.example:${PORT}",
        httpsPorts: [8443],
      });
    } finally {
      await sandbox.kill();
    }
  });

  it("refuses bad settings with 400", async () => {
    const cases: Array<[{ httpsPorts?: number[]; maskRequestHost?: string }, RegExp]> = [
      [{ httpsPorts: [49983] }, /49983 is envd's port/],
      [{ httpsPorts: [0] }, /not a port/],
      [{ httpsPorts: [443, 443] }, /more than once/],
      [{ maskRequestHost: "bad host:1" }, /mask request host is not valid/],
      [{ maskRequestHost: "hôte.example" }, /is not ASCII. Please use ASCII characters only./],
    ];
    for (const [network, message] of cases) {
      await expect(Sandbox.create({ network })).rejects.toThrow(message);
    }
  });
});

/** POST /sandboxes/{id}/fork: the sandboxes it made, as the API answers them. */
async function forkOf(
  sandboxId: string,
): Promise<Array<{ sandboxID: string; trafficAccessToken?: string | null }>> {
  const res = await fetch(`${t.apiUrl}/sandboxes/${sandboxId}/fork`, {
    method: "POST",
    headers: { "X-API-Key": t.apiKey, "Content-Type": "application/json" },
    body: JSON.stringify({ count: 1 }),
  });
  expect(res.status).toBe(201);
  const results = (await res.json()) as Array<{
    sandbox?: { sandboxID: string; trafficAccessToken?: string | null };
  }>;
  return results.flatMap((r) => (r.sandbox ? [r.sandbox] : []));
}
