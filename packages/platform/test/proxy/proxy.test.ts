import { type ChildProcess, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { EventEmitter, once } from "node:events";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";
import net from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { Writable } from "node:stream";
import { getSignature, Sandbox } from "e2b";
import { createLogger } from "../../src/lib/log.js";
import {
  createProxyServer,
  ENVD_PORT,
  type ProxyServer,
  type SandboxLocation,
  type SandboxResolver,
} from "../../src/proxy/index.js";

// Fake sandboxes are loopback servers: the resolver hands out 127.0.0.1 and the test picks the port.

interface Reply {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
}

const upstreamEvents = new EventEmitter();
const upgradedSockets = new Set<net.Socket>();

function startUpstream(): Promise<http.Server> {
  const server = http.createServer((req, res) => {
    const url = req.url ?? "/";
    if (url.startsWith("/headers")) {
      res.setHeader("content-type", "application/json");
      res.end(JSON.stringify({ method: req.method, url, headers: req.headers }));
    } else if (url === "/echo") {
      // Sends each chunk back as it arrives: chunked both ways, no buffering.
      res.writeHead(200, { "content-type": "application/octet-stream" });
      res.flushHeaders();
      req.pipe(res);
    } else if (url === "/slow") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("first;");
      upstreamEvents.emit("slow-held", () => res.end("last"));
    } else if (url === "/forever") {
      res.writeHead(200, { "content-type": "text/plain" });
      res.write("tick;");
      const timer = setInterval(() => res.write("tick;"), 20);
      res.on("close", () => {
        clearInterval(timer);
        upstreamEvents.emit("forever-closed");
      });
    } else if (url === "/after-half-close") {
      // Answers only once the whole request has arrived.
      const chunks: Buffer[] = [];
      req.on("data", (chunk: Buffer) => chunks.push(chunk));
      req.on("end", () => res.end(`got ${Buffer.concat(chunks).length}`));
    } else {
      res.writeHead(404);
      res.end();
    }
  });
  server.on("upgrade", (req: http.IncomingMessage, socket: net.Socket, head: Buffer) => {
    upgradedSockets.add(socket);
    socket.once("close", () => upgradedSockets.delete(socket));
    socket.on("error", (err: NodeJS.ErrnoException) => upstreamEvents.emit("upgraded-error", err.code));
    if (req.headers.upgrade !== "echo") {
      socket.end("HTTP/1.1 426 Upgrade Required\r\nContent-Length: 7\r\n\r\nno echo");
      return;
    }
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: echo\r\nConnection: Upgrade\r\nX-Seen-Host: ${req.headers.host}\r\n\r\n`,
    );
    if (head.length > 0) socket.write(head);
    socket.pipe(socket); // echoes and, on the client's half-close, ends its own side
  });
  return new Promise((resolve) => server.listen(0, "127.0.0.1", () => resolve(server)));
}

function portOf(server: net.Server): number {
  return (server.address() as net.AddressInfo).port;
}

const agent = new http.Agent({ keepAlive: true });

function request(
  port: number,
  options: { path?: string; method?: string; headers?: http.OutgoingHttpHeaders; body?: Buffer },
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        host: "127.0.0.1",
        port,
        path: options.path ?? "/headers",
        method: options.method ?? (options.body ? "POST" : "GET"),
        headers: options.headers,
        agent,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on("error", reject);
      },
    );
    req.on("error", reject);
    req.end(options.body);
  });
}

function json(reply: Reply): Record<string, unknown> {
  return JSON.parse(reply.body.toString("utf8")) as Record<string, unknown>;
}

/** Reads a socket until `done` holds for everything received so far. */
function readUntil(socket: net.Socket, done: (text: string) => boolean): Promise<string> {
  return new Promise((resolve, reject) => {
    let text = "";
    const onData = (chunk: Buffer) => {
      text += chunk.toString("latin1");
      if (done(text)) {
        socket.off("data", onData);
        socket.off("error", reject);
        resolve(text);
      }
    };
    socket.on("data", onData);
    socket.on("error", reject);
  });
}

async function freePort(): Promise<number> {
  const probe = net.createServer();
  await new Promise<void>((resolve) => probe.listen(0, "127.0.0.1", resolve));
  const port = portOf(probe);
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

describe("sandbox proxy", () => {
  let upstream: http.Server;
  let P: number;
  let proxy: ProxyServer;
  let proxyPort: number;
  const locations = new Map<string, SandboxLocation>();
  let resumeCalls = 0;
  const logged: string[] = [];

  const resolver: SandboxResolver = {
    resolve: async (sandboxID) => locations.get(sandboxID),
    resume: async (sandboxID) => {
      resumeCalls++;
      await new Promise((resolve) => setTimeout(resolve, 50));
      if (sandboxID === "broken") return undefined;
      locations.set(sandboxID, { state: "running", address: "127.0.0.1" });
      return { address: "127.0.0.1" };
    },
  };

  beforeAll(async () => {
    upstream = await startUpstream();
    P = portOf(upstream);
    for (const id of ["sbx1", "sbx2", "cutme", "h2cut", "tunnel"])
      locations.set(id, { state: "running", address: "127.0.0.1" });
    locations.set("frozen", { state: "paused", autoResume: false });
    // envd's port, relayed to the test's upstream (what a cluster's node proxy gets)
    locations.set("envdcors", { state: "running", address: "127.0.0.1", relayPort: P });
    proxy = createProxyServer({
      resolver,
      domain: "localhost",
      log: createLogger({
        level: "debug",
        format: "json",
        destination: new Writable({
          write(chunk: Buffer, _encoding, done) {
            logged.push(chunk.toString());
            done();
          },
        }),
      }),
    });
    await proxy.listen(0, "127.0.0.1");
    proxyPort = proxy.port;
  });

  afterAll(async () => {
    agent.destroy();
    await proxy.close();
    for (const socket of upgradedSockets) socket.destroy();
    upstream.closeAllConnections();
    await new Promise<void>((resolve) => upstream.close(() => resolve()));
  });

  describe("routing", () => {
    test("by Host {port}-{sandboxID}.{domain}, with X-Forwarded-* and the original Host", async () => {
      const host = `${P}-sbx1.localhost:${proxyPort}`;
      const reply = await request(proxyPort, {
        path: "/headers?x=1",
        headers: { host, "x-forwarded-for": "6.6.6.6" },
      });
      expect(reply.status).toBe(200);
      const seen = json(reply) as { url: string; headers: Record<string, string> };
      expect(seen.url).toBe("/headers?x=1");
      expect(seen.headers.host).toBe(host);
      // An untrusted client's X-Forwarded-For is replaced, not extended.
      expect(seen.headers["x-forwarded-for"]).toBe("127.0.0.1");
      expect(seen.headers["x-forwarded-proto"]).toBe("http");
      expect(seen.headers["x-forwarded-host"]).toBe(host);
    });

    test("any domain suffix routes on the first label", async () => {
      const reply = await request(proxyPort, { headers: { host: `${P}-sbx1.sandbox.example.com` } });
      expect(reply.status).toBe(200);
    });

    test("by E2b-Sandbox-Id and E2b-Sandbox-Port, which win over the Host", async () => {
      const reply = await request(proxyPort, {
        headers: { host: `${P}-unknown.localhost`, "E2b-Sandbox-Id": "sbx1", "E2b-Sandbox-Port": String(P) },
      });
      expect(reply.status).toBe(200);
      const seen = json(reply) as { headers: Record<string, string> };
      expect(seen.headers["e2b-sandbox-id"]).toBe("sbx1");
    });

    test("hop-by-hop headers are not forwarded", async () => {
      const reply = await request(proxyPort, {
        headers: {
          host: `${P}-sbx1.localhost`,
          connection: "keep-alive, x-private",
          "x-private": "1",
          "proxy-authorization": "x",
        },
      });
      const seen = json(reply) as { headers: Record<string, string> };
      expect(seen.headers["x-private"]).toBeUndefined();
      expect(seen.headers["proxy-authorization"]).toBeUndefined();
    });

    test("400 JSON without a Host or headers naming a sandbox", async () => {
      const reply = await request(proxyPort, { headers: { host: "localhost" } });
      expect(reply.status).toBe(400);
      expect(reply.headers["content-type"]).toBe("application/json");
      const body = json(reply);
      expect(body.code).toBe(400);
      expect(body.message).toMatch(/E2b-Sandbox-Id/);
    });
  });

  describe("CORS for envd", () => {
    const origin = "http://127.0.0.1:3000";

    test("answers envd's preflight itself, by host or by E2b-Sandbox-Id, without waking a paused sandbox", async () => {
      const before = resumeCalls;
      for (const headers of [
        {
          host: `${ENVD_PORT}-frozen.localhost`,
          "access-control-request-headers": "x-access-token,content-type",
        },
        {
          host: "anything",
          "access-control-request-headers": "e2b-sandbox-id,e2b-sandbox-port,x-access-token",
        },
      ]) {
        const reply = await request(proxyPort, {
          method: "OPTIONS",
          path: "/process.Process/Start",
          headers: { ...headers, origin, "access-control-request-method": "POST" },
        });
        expect(reply.status).toBe(204);
        expect(reply.headers).toMatchObject({
          "access-control-allow-origin": "*",
          "access-control-allow-headers": headers["access-control-request-headers"],
          "access-control-allow-methods": expect.stringContaining("POST"),
        });
      }
      expect(resumeCalls).toBe(before);
    });

    test("lets pages read envd's answers and errors, and no other port's", async () => {
      const envd = await request(proxyPort, { headers: { host: `${ENVD_PORT}-envdcors.localhost`, origin } });
      expect(envd.status).toBe(200);
      expect(envd.headers["access-control-allow-origin"]).toBe("*");
      expect(envd.headers["access-control-expose-headers"]).toBe("*");
      const gone = await request(proxyPort, { headers: { host: `${ENVD_PORT}-unknown.localhost`, origin } });
      expect(gone.status).toBe(502);
      expect(gone.headers["access-control-allow-origin"]).toBe("*");
      const app = await request(proxyPort, { headers: { host: `${P}-sbx1.localhost`, origin } });
      expect(app.status).toBe(200);
      expect(app.headers["access-control-allow-origin"]).toBeUndefined();
      const appPreflight = await request(proxyPort, {
        method: "OPTIONS",
        headers: { host: `${P}-sbx1.localhost`, origin, "access-control-request-method": "POST" },
      });
      // a user's port answers its own preflights
      expect(JSON.parse(appPreflight.body.toString()).method).toBe("OPTIONS");
      // no Origin, no CORS headers
      const plain = await request(proxyPort, { headers: { host: `${ENVD_PORT}-envdcors.localhost` } });
      expect(plain.headers["access-control-allow-origin"]).toBeUndefined();
    });
  });

  describe("sandbox states", () => {
    test("unknown sandbox: 502 with E2B's body {message, code, sandboxId} and the seed's sandboxID", async () => {
      const reply = await request(proxyPort, {
        path: "/health",
        headers: { host: `${ENVD_PORT}-nope.localhost` },
      });
      expect(reply.status).toBe(502);
      expect(reply.headers["content-type"]).toBe("application/json");
      expect(json(reply)).toEqual({
        message: "The sandbox was not found",
        code: 502,
        sandboxID: "nope",
        sandboxId: "nope",
      });
      expect(proxy.metrics.errors.sandbox_not_found).toBeGreaterThan(0);
    });

    test("paused sandbox without autoResume: 502", async () => {
      const reply = await request(proxyPort, {
        path: "/health",
        headers: { "E2b-Sandbox-Id": "frozen", "E2b-Sandbox-Port": "49983" },
      });
      expect(reply.status).toBe(502);
      const body = json(reply);
      expect(body).toMatchObject({ code: 502, sandboxID: "frozen" });
      expect(body.message).toMatch(/paused and not running/);
    });

    test("paused sandbox with autoResume: resumed once, then forwarded", async () => {
      locations.set("sleepy", { state: "paused", autoResume: true });
      resumeCalls = 0;
      const host = `${P}-sleepy.localhost`;
      const replies = await Promise.all([
        request(proxyPort, { headers: { host } }),
        request(proxyPort, { headers: { host } }),
      ]);
      expect(replies.map((r) => r.status)).toEqual([200, 200]);
      expect(resumeCalls).toBe(1);
      expect(locations.get("sleepy")).toEqual({ state: "running", address: "127.0.0.1" });
    });

    test("a resume that fails answers 502", async () => {
      locations.set("broken", { state: "paused", autoResume: true });
      const reply = await request(proxyPort, { headers: { host: `${P}-broken.localhost` } });
      expect(reply.status).toBe(502);
      expect(json(reply)).toMatchObject({ code: 502, sandboxID: "broken" });
    });

    test("nothing listening on the port: 502 naming the port", async () => {
      const closed = await freePort();
      const reply = await request(proxyPort, { headers: { host: `${closed}-sbx1.localhost` } });
      expect(reply.status).toBe(502);
      const body = json(reply);
      expect(body).toMatchObject({ code: 502, sandboxID: "sbx1", port: closed });
      expect(body.message).toContain(`port ${closed}`);
    });
  });

  describe("HTTP/1.1 streaming", () => {
    test("a large chunked upload streams through and back byte for byte", async () => {
      const chunk = randomBytes(1 << 20);
      const sent = createHash("sha256");
      const received = createHash("sha256");
      let receivedBytes = 0;
      await new Promise<void>((resolve, reject) => {
        const req = http.request(
          {
            host: "127.0.0.1",
            port: proxyPort,
            method: "POST",
            path: "/echo",
            headers: { host: `${P}-sbx1.localhost` },
          },
          (res) => {
            res.on("data", (data: Buffer) => {
              received.update(data);
              receivedBytes += data.length;
            });
            res.on("end", resolve);
          },
        );
        req.on("error", reject);
        let i = 0;
        const write = (): void => {
          while (i < 48) {
            const piece = Buffer.from(chunk);
            piece.writeUInt32BE(i++);
            sent.update(piece);
            if (!req.write(piece)) return void req.once("drain", write);
          }
          req.end();
        };
        write();
      });
      expect(receivedBytes).toBe(48 << 20);
      expect(received.digest("hex")).toBe(sent.digest("hex"));
    });

    test("request and response are not buffered: each chunk echoes before the next is sent", async () => {
      const req = http.request({
        host: "127.0.0.1",
        port: proxyPort,
        method: "POST",
        path: "/echo",
        headers: { host: `${P}-sbx1.localhost` },
      });
      const responded = once(req, "response");
      req.flushHeaders();
      const [res] = (await responded) as [http.IncomingMessage];
      for (let i = 0; i < 5; i++) {
        const piece = `piece-${i};`;
        const echoed = once(res, "data");
        req.write(piece);
        const [data] = (await echoed) as [Buffer];
        expect(data.toString()).toBe(piece);
      }
      req.end();
      await once(res, "end");
    });

    test("the first response chunk arrives while the sandbox is still writing", async () => {
      const held = once(upstreamEvents, "slow-held");
      const req = http.get({
        host: "127.0.0.1",
        port: proxyPort,
        path: "/slow",
        headers: { host: `${P}-sbx1.localhost` },
      });
      const [res] = (await once(req, "response")) as [http.IncomingMessage];
      const [first] = (await once(res, "data")) as [Buffer];
      expect(first.toString()).toBe("first;");
      // Only now does the upstream finish its answer.
      const [release] = (await held) as [() => void];
      const rest: Buffer[] = [];
      res.on("data", (chunk: Buffer) => rest.push(chunk));
      release();
      await once(res, "end");
      expect(Buffer.concat(rest).toString()).toBe("last");
    });

    test("a client that goes away cuts its upstream request", async () => {
      const abortedBefore = proxy.metrics.errors.client_aborted;
      const req = http.get({
        host: "127.0.0.1",
        port: proxyPort,
        path: "/forever",
        headers: { host: `${P}-sbx1.localhost` },
      });
      req.on("error", () => {});
      const [res] = (await once(req, "response")) as [http.IncomingMessage];
      await once(res, "data");
      const upstreamClosed = once(upstreamEvents, "forever-closed");
      req.destroy();
      await upstreamClosed;
      expect(proxy.metrics.errors.client_aborted).toBe(abortedBefore + 1);
    });

    test("a client that half-closes after its request still gets the answer", async () => {
      const socket = net.connect(proxyPort, "127.0.0.1");
      await once(socket, "connect");
      socket.end(
        `POST /after-half-close HTTP/1.1\r\nHost: ${P}-sbx1.localhost\r\nContent-Length: 5\r\n\r\nhello`,
      );
      const text = await readUntil(socket, (t) => t.endsWith("got 5"));
      expect(text).toMatch(/^HTTP\/1\.1 200/);
      socket.destroy();
    });
  });

  describe("HTTP/2 (h2c, prior knowledge)", () => {
    let session: http2.ClientHttp2Session;

    beforeAll(async () => {
      session = http2.connect(`http://127.0.0.1:${proxyPort}`);
      await once(session, "connect");
    });

    afterAll(() => session.close());

    function h2(headers: http2.OutgoingHttpHeaders, body?: Buffer): Promise<Reply> {
      return new Promise((resolve, reject) => {
        const stream = session.request(headers, { endStream: !body });
        let head: http2.IncomingHttpHeaders = {};
        const chunks: Buffer[] = [];
        stream.on("response", (h) => (head = h));
        stream.on("data", (chunk: Buffer) => chunks.push(chunk));
        stream.on("end", () =>
          resolve({ status: Number(head[":status"]), headers: head, body: Buffer.concat(chunks) }),
        );
        stream.on("error", reject);
        if (body) stream.end(body);
      });
    }

    test("routes by :authority and forwards as HTTP/1.1 with a Host", async () => {
      const reply = await h2({ ":path": "/headers", ":authority": `${P}-sbx1.localhost` });
      expect(reply.status).toBe(200);
      const seen = json(reply) as { headers: Record<string, string> };
      expect(seen.headers.host).toBe(`${P}-sbx1.localhost`);
      expect(seen.headers["x-forwarded-for"]).toBe("127.0.0.1");
    });

    test("streams a request body both ways", async () => {
      const body = randomBytes(8 << 20);
      const reply = await h2(
        { ":method": "POST", ":path": "/echo", ":authority": `${P}-sbx1.localhost` },
        body,
      );
      expect(reply.status).toBe(200);
      expect(reply.body.equals(body)).toBe(true);
    });

    test("502 JSON for an unknown sandbox", async () => {
      const reply = await h2({
        ":path": "/health",
        ":authority": "localhost",
        "e2b-sandbox-id": "nope",
        "e2b-sandbox-port": "49983",
      });
      expect(reply.status).toBe(502);
      expect(reply.headers["content-type"]).toBe("application/json");
      expect(json(reply)).toMatchObject({ code: 502, sandboxID: "nope" });
    });

    test("closeSandboxConnections resets that sandbox's streams and leaves the session alone", async () => {
      const stream = session.request({ ":path": "/forever", ":authority": `${P}-h2cut.localhost` });
      await once(stream, "data");
      const upstreamClosed = once(upstreamEvents, "forever-closed");
      const closed = new Promise((resolve) => stream.once("close", resolve));
      stream.on("error", () => {});
      proxy.closeSandboxConnections("h2cut");
      await Promise.all([closed, upstreamClosed]);
      expect(stream.rstCode).toBe(http2.constants.NGHTTP2_INTERNAL_ERROR);
      const other = await h2({ ":path": "/headers", ":authority": `${P}-sbx2.localhost` });
      expect(other.status).toBe(200);
    });
  });

  describe("Upgrade", () => {
    async function openTunnel(
      sandboxID: string,
      upgrade = "echo",
    ): Promise<{ socket: net.Socket; head: string }> {
      const socket = net.connect(proxyPort, "127.0.0.1");
      await once(socket, "connect");
      socket.write(
        `GET /ws HTTP/1.1\r\nHost: ${P}-${sandboxID}.localhost\r\nConnection: Upgrade\r\nUpgrade: ${upgrade}\r\n\r\n`,
      );
      const head = await readUntil(socket, (t) => t.includes("\r\n\r\n"));
      return { socket, head };
    }

    test("forwards the upgrade and the 101, then echoes raw bytes; half-close passes through", async () => {
      const { socket, head } = await openTunnel("sbx1");
      expect(head).toMatch(/^HTTP\/1\.1 101 /);
      expect(head).toContain(`X-Seen-Host: ${P}-sbx1.localhost`);
      socket.write("ping");
      expect(await readUntil(socket, (t) => t === "ping")).toBe("ping");
      // Then a large write and a half-close: every byte comes back before the end.
      const payload = randomBytes(4 << 20);
      const back: Buffer[] = [];
      socket.on("data", (chunk: Buffer) => back.push(chunk));
      socket.end(payload);
      await once(socket, "end");
      expect(Buffer.concat(back).equals(payload)).toBe(true);
    });

    test("a refused upgrade is passed on and the connection closed", async () => {
      const { socket, head } = await openTunnel("sbx1", "nope");
      expect(head).toMatch(/^HTTP\/1\.1 426 /);
      const rest = await new Promise<string>((resolve) => {
        let text = head.slice(head.indexOf("\r\n\r\n") + 4);
        socket.on("data", (chunk: Buffer) => (text += chunk.toString()));
        socket.on("close", () => resolve(text));
      });
      expect(rest).toBe("no echo");
    });

    test("an upgrade to an unknown sandbox gets the 502 JSON", async () => {
      const socket = net.connect(proxyPort, "127.0.0.1");
      socket.write(
        `GET /ws HTTP/1.1\r\nHost: ${P}-nope.localhost\r\nConnection: Upgrade\r\nUpgrade: echo\r\n\r\n`,
      );
      const text = await readUntil(socket, (t) => t.endsWith("}"));
      expect(text).toMatch(/^HTTP\/1\.1 502 /);
      expect(JSON.parse(text.slice(text.indexOf("{")))).toMatchObject({ code: 502, sandboxID: "nope" });
      socket.destroy();
    });

    test("closeSandboxConnections cuts an open tunnel, reset on the sandbox's side", async () => {
      const { socket } = await openTunnel("tunnel");
      const closed = once(socket, "close");
      // an RST closes the sandbox's end at once, where a FIN waits for its process (frozen)
      const reset = once(upstreamEvents, "upgraded-error");
      proxy.closeSandboxConnections("tunnel");
      await closed;
      expect(socket.destroyed).toBe(true);
      expect(await reset).toEqual(["ECONNRESET"]);
    });
  });

  test("closeSandboxConnections cuts an open HTTP/1.1 stream at both ends", async () => {
    const req = http.get({
      host: "127.0.0.1",
      port: proxyPort,
      path: "/forever",
      headers: { host: `${P}-cutme.localhost` },
    });
    const [res] = (await once(req, "response")) as [http.IncomingMessage];
    await once(res, "data");
    const upstreamClosed = once(upstreamEvents, "forever-closed");
    const clientClosed = new Promise((resolve) => res.once("close", resolve));
    res.on("error", () => {});
    const cutBefore = proxy.metrics.errors.cut;
    proxy.closeSandboxConnections("cutme");
    await Promise.all([clientClosed, upstreamClosed]);
    expect(res.complete).toBe(false);
    expect(proxy.metrics.errors.cut).toBe(cutBefore + 1);
    // The sandbox is still reported running, so a new request goes through on a fresh pool.
    expect((await request(proxyPort, { headers: { host: `${P}-cutme.localhost` } })).status).toBe(200);
  });

  test("counts requests, bytes and statuses", async () => {
    const metrics = proxy.metrics;
    expect(metrics.requests).toBeGreaterThan(10);
    expect(metrics.bytesFromClients).toBeGreaterThan(48 << 20);
    expect(metrics.bytesToClients).toBeGreaterThan(48 << 20);
    expect(metrics.responses[200]).toBeGreaterThan(0);
    expect(metrics.responses[502]).toBeGreaterThan(0);
    expect(metrics.responses[400]).toBeGreaterThan(0);
    expect(metrics.upgrades).toBeGreaterThan(0);
  });
});

// A real envd behind the proxy. The e2b client always sends `E2b-Sandbox-Port: 49983`, so envd
// listens on its real port on an address of its own in 127/8 (still loopback only).
const envdDir = path.resolve(__dirname, "../../../envd");
const envdHost = `127.0.0.${100 + (process.pid % 150)}`;

const envdBundle = path.join(envdDir, "dist/bundle/envd.cjs");
const envdEnv = {
  ...process.env,
  ENVD_PORT: String(ENVD_PORT),
  ENVD_HOST: envdHost,
  ENVD_DEFAULT_USER: "root",
};

/** envd from its bundle (the global set-up builds it): a failure to start fails the tests, never skips them. */
async function startEnvd(): Promise<ChildProcess> {
  if (!existsSync(envdBundle))
    throw new Error(`no envd bundle at ${envdBundle}: the global set-up builds it`);
  const child = spawn(process.execPath, [envdBundle], { env: envdEnv, stdio: "ignore" });
  const deadline = Date.now() + 10_000;
  for (;;) {
    const healthy = await fetch(`http://${envdHost}:${ENVD_PORT}/health`).then(
      (res) => res.status === 204,
      () => false,
    );
    if (healthy) return child;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill("SIGKILL");
      throw new Error(`envd on ${envdHost}:${ENVD_PORT} did not answer /health`);
    }
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

async function stopEnvd(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = once(child, "exit");
  child.kill("SIGTERM");
  const force = setTimeout(() => child.kill("SIGKILL"), 5000);
  await exited;
  clearTimeout(force);
}

describe("sandbox proxy in front of a real envd", () => {
  const locations = new Map<string, SandboxLocation>([["envd1", { state: "running", address: envdHost }]]);
  let envd: ChildProcess;
  let proxy: ProxyServer;
  let sandbox: Sandbox;
  // The client runs commands in a login shell: an empty HOME keeps this machine's root profile out.
  let home: string;

  beforeAll(async () => {
    home = mkdtempSync(path.join(tmpdir(), "proxy-envd-home-"));
    envd = await startEnvd();
    proxy = createProxyServer({ resolver: { resolve: async (id) => locations.get(id) } });
    await proxy.listen(0, "127.0.0.1");
    sandbox = new Sandbox({
      sandboxId: "envd1",
      sandboxUrl: `http://127.0.0.1:${proxy.port}`,
      envdVersion: "0.6.4",
    });
  });

  afterAll(async () => {
    await proxy?.close();
    if (envd) await stopEnvd(envd);
    if (home) rmSync(home, { recursive: true, force: true });
  });

  test("a Connect server stream passes through as it is produced", async () => {
    const message = Buffer.from(
      JSON.stringify({
        process: { cmd: "/bin/bash", args: ["-c", "echo one; sleep 0.4; echo two"] },
        stdin: false,
      }),
    );
    const envelope = Buffer.alloc(5 + message.length);
    envelope.writeUInt32BE(message.length, 1);
    message.copy(envelope, 5);
    const req = http.request({
      host: "127.0.0.1",
      port: proxy.port,
      method: "POST",
      path: "/process.Process/Start",
      headers: {
        "content-type": "application/connect+json",
        "connect-protocol-version": "1",
        "e2b-sandbox-id": "envd1",
        "e2b-sandbox-port": String(ENVD_PORT),
      },
    });
    req.end(envelope);
    const [res] = (await once(req, "response")) as [http.IncomingMessage];
    expect(res.statusCode).toBe(200);
    const stdout: { text: string; at: number }[] = [];
    let buffered = Buffer.alloc(0);
    let endStream = false;
    res.on("data", (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      while (buffered.length >= 5 && buffered.length >= 5 + buffered.readUInt32BE(1)) {
        const size = buffered.readUInt32BE(1);
        const flags = buffered[0]!;
        const body = JSON.parse(buffered.subarray(5, 5 + size).toString()) as {
          event?: { data?: { stdout?: string } };
        };
        buffered = buffered.subarray(5 + size);
        if (flags & 2) endStream = true;
        const data = body.event?.data?.stdout;
        if (data) stdout.push({ text: Buffer.from(data, "base64").toString(), at: Date.now() });
      }
    });
    await once(res, "end");
    expect(endStream).toBe(true);
    expect(stdout.map((s) => s.text).join("")).toBe("one\ntwo\n");
    expect(stdout.at(-1)!.at - stdout[0]!.at).toBeGreaterThanOrEqual(300);
  });

  test("the public e2b client runs commands and streams output through the proxy", async () => {
    expect(await sandbox.isRunning()).toBe(true);
    const seen: string[] = [];
    const result = await sandbox.commands.run("echo hello; sleep 0.2; echo world", {
      envs: { HOME: home },
      onStdout: (d) => void seen.push(d),
    });
    expect(result.exitCode).toBe(0);
    expect(result.stdout).toBe("hello\nworld\n");
    expect(seen.join("")).toBe("hello\nworld\n");
  });

  test("a signed file URL with no sandbox in it reaches the sandbox whose token signed it", async () => {
    // With E2B_SANDBOX_URL the client's downloadUrl/uploadUrl are the proxy's one URL plus a signature.
    const tokens = new Map([
      ["other", "tok-other"],
      ["envd1", "tok-envd1"],
    ]);
    const signed = createProxyServer({
      resolver: {
        resolve: async (id) => locations.get(id),
        resolveSigned: async (matches) => [...tokens].find(([, token]) => matches(token))?.[0],
      },
    });
    await signed.listen(0, "127.0.0.1");
    try {
      const file = path.join(home, "signed.txt");
      await sandbox.files.write(file, "signed content");
      const url = async (token: string) => {
        const sig = await getSignature({
          path: file,
          operation: "read",
          user: undefined,
          expirationInSeconds: 60,
          envdAccessToken: token,
        });
        return `http://127.0.0.1:${signed.port}/files?path=${encodeURIComponent(file)}&signature=${encodeURIComponent(sig.signature)}&signature_expiration=${sig.expiration}`;
      };
      const ok = await fetch(await url("tok-envd1"));
      expect(ok.status).toBe(200);
      expect(await ok.text()).toBe("signed content");
      // no running sandbox's token made it: no route, as without any signature
      expect((await fetch(await url("tok-unknown"))).status).toBe(400);
    } finally {
      await signed.close();
    }
  });

  test("killing cuts the client's open stream and isRunning() turns false", async () => {
    const handle = await sandbox.commands.run("sleep 30", { background: true, envs: { HOME: home } });
    locations.delete("envd1");
    proxy.closeSandboxConnections("envd1");
    await expect(handle.wait()).rejects.toThrow();
    expect(await sandbox.isRunning()).toBe(false);
    locations.set("envd1", { state: "running", address: envdHost });
    await handle.kill().catch(() => false);
  });
});
