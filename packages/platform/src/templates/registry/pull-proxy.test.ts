import { mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import net, { type AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { DestinationGuard, destinationRules } from "../../network/destination-guard.js";
import { PullProxy } from "./pull-proxy.js";

/** Sends `request` over the proxy's socket and collects the answer until it closes or `until` matches. */
function exchange(socket: string, request: string, until?: RegExp): Promise<string> {
  return new Promise((resolve, reject) => {
    const c = net.connect(socket);
    let got = "";
    c.on("data", (d) => {
      got += d.toString("latin1");
      if (until?.test(got)) c.end();
    });
    c.on("close", () => resolve(got));
    c.on("error", reject);
    c.write(request);
  });
}

describe("PullProxy", () => {
  let dir: string;
  let origin: http.Server;
  let originPort: number;
  let closedPort: number;
  let proxy: PullProxy;
  const seen: string[] = [];

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-pull-proxy-"));
    origin = http.createServer((req, res) => {
      seen.push(`${req.method} ${req.url} host=${req.headers.host}`);
      res.end("from origin");
    });
    await new Promise<void>((resolve) => origin.listen(0, "127.0.0.1", resolve));
    originPort = (origin.address() as AddressInfo).port;
    const spare = net.createServer();
    await new Promise<void>((resolve) => spare.listen(0, "127.0.0.1", resolve));
    closedPort = (spare.address() as AddressInfo).port;
    await new Promise<void>((resolve) => spare.close(() => resolve()));
    const guard = new DestinationGuard({
      allow: destinationRules(
        [`127.0.0.1:${originPort}`, `127.0.0.1:${closedPort}`, "registry.test"],
        "test",
      ),
      resolve: async (name) => (name === "registry.test" || name === "rebound.test" ? ["127.0.0.1"] : []),
    });
    proxy = await PullProxy.listen(path.join(dir, "proxy.sock"), guard);
  });

  afterAll(async () => {
    await proxy?.close();
    await new Promise<void>((resolve) => origin?.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("tunnels a CONNECT to an allowed host to the address it checked", async () => {
    const got = await exchange(
      proxy.socketPath,
      `CONNECT registry.test:${originPort} HTTP/1.1\r\nHost: registry.test:${originPort}\r\n\r\n` +
        `GET /v2/ HTTP/1.1\r\nHost: registry.test\r\nConnection: close\r\n\r\n`,
      /from origin/,
    );
    expect(got).toMatch(/^HTTP\/1\.1 200 Connection Established\r\n\r\nHTTP\/1\.1 200 OK/);
    expect(seen).toContain("GET /v2/ host=registry.test");
  });

  it("forwards a plain-HTTP request in absolute form, Host kept", async () => {
    const got = await exchange(
      proxy.socketPath,
      `GET http://127.0.0.1:${originPort}/v2/token?x=1 HTTP/1.1\r\nHost: 127.0.0.1:${originPort}\r\nConnection: close\r\n\r\n`,
    );
    expect(got).toMatch(/^HTTP\/1\.1 200 OK/);
    expect(got).toContain("from origin");
    expect(seen).toContain(`GET /v2/token?x=1 host=127.0.0.1:${originPort}`);
  });

  it("refuses internal destinations the operator did not allow, by address or by what a name resolves to", async () => {
    const before = seen.length;
    const targets = ["169.254.169.254:80", "127.0.0.1:1", "2130706433:1", "rebound.test:1"];
    for (const target of targets) {
      const got = await exchange(proxy.socketPath, `CONNECT ${target} HTTP/1.1\r\nHost: ${target}\r\n\r\n`);
      expect(got).toBe("HTTP/1.1 403 destination not allowed\r\n\r\n");
    }
    const plain = await exchange(
      proxy.socketPath,
      "GET http://10.0.0.1/latest/meta-data HTTP/1.1\r\nHost: 10.0.0.1\r\nConnection: close\r\n\r\n",
    );
    expect(plain).toMatch(/^HTTP\/1\.1 403 destination not allowed/);
    expect(seen.length).toBe(before);
    expect(proxy.outcomes).toEqual(
      expect.arrayContaining([
        { host: "169.254.169.254", port: 80, refused: "link-local", literal: true },
        { host: "rebound.test", port: 1, refused: "loopback", literal: false },
        { host: "10.0.0.1", port: 80, refused: "private", literal: true },
      ]),
    );
  });

  it("answers a failed connection with Go's words for it, and records it", async () => {
    const got = await exchange(
      proxy.socketPath,
      `CONNECT 127.0.0.1:${closedPort} HTTP/1.1\r\nHost: 127.0.0.1:${closedPort}\r\n\r\n`,
    );
    expect(got).toBe("HTTP/1.1 502 connection refused\r\n\r\n");
    const unknown = await exchange(
      proxy.socketPath,
      "CONNECT nowhere.test:443 HTTP/1.1\r\nHost: nowhere.test\r\n\r\n",
    );
    expect(unknown).toBe("HTTP/1.1 502 no such host\r\n\r\n");
    expect(proxy.outcomes).toEqual(
      expect.arrayContaining([
        { host: "127.0.0.1", port: closedPort, failed: "connection refused" },
        { host: "nowhere.test", port: 443, failed: "no such host" },
      ]),
    );
  });

  it("is no server of its own: a request in origin form is refused", async () => {
    const got = await exchange(proxy.socketPath, "GET /v2/ HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n");
    expect(got).toMatch(/^HTTP\/1\.1 400 not a proxy request/);
  });
});
