import { X509Certificate } from "node:crypto";
import { mkdtemp, rm, stat } from "node:fs/promises";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import tls from "node:tls";
import { createLogger } from "../lib/log.js";
import { NO_PLACEHOLDER_VALUES, type PlaceholderValues } from "../model/placeholders.js";
import { EgressCa } from "./egress-ca.js";
import type { NewDecision } from "./egress-log.js";
import { HeaderTransformer } from "./transform-proxy.js";
import { compileTransforms, type Transforms } from "./transforms.js";

const log = createLogger({ level: "silent" });
let dir: string;
let egressCa: EgressCa;
let originCa: EgressCa;

beforeAll(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), "x-transforms-"));
  egressCa = await EgressCa.open(path.join(dir, "egress"));
  originCa = await EgressCa.open(path.join(dir, "origin"));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe("egress CA", () => {
  it("is made once, its key readable by the platform alone", async () => {
    expect((await stat(path.join(dir, "egress", "ca.key"))).mode & 0o777).toBe(0o600);
    const again = await EgressCa.open(path.join(dir, "egress"));
    expect(again.cert).toBe(egressCa.cert);
    expect(new X509Certificate(egressCa.cert).ca).toBe(true);
  });

  it("mints a leaf per name that the CA verifies, keeps it, and refuses names that are not host names", async () => {
    const first = await egressCa.contextFor("Echo.Test");
    expect(await egressCa.contextFor("echo.test")).toBe(first);
    expect(egressCa.cachedNames).toContain("echo.test");
    const server = tls.createServer({ SNICallback: (_n, cb) => cb(null, first) }, (s) => s.end("hi"));
    await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
    const port = (server.address() as net.AddressInfo).port;
    try {
      const peer = await new Promise<tls.PeerCertificate>((resolve, reject) => {
        const s = tls.connect({ host: "127.0.0.1", port, servername: "echo.test", ca: egressCa.cert }, () => {
          resolve(s.getPeerCertificate());
          s.destroy();
        });
        s.once("error", reject);
      });
      expect(peer.subjectaltname).toBe("DNS:echo.test");
      // another name is not what the leaf says
      await expect(
        new Promise((resolve, reject) => {
          const s = tls.connect(
            { host: "127.0.0.1", port, servername: "other.test", ca: egressCa.cert },
            () => resolve(s.destroy()),
          );
          s.once("error", reject);
        }),
      ).rejects.toThrow(/other\.test/);
    } finally {
      server.close();
    }
    for (const bad of ["a b", "x/CN=y", "a.test\nDNS:evil", ""]) {
      await expect(egressCa.contextFor(bad)).rejects.toThrow(/not a host name/);
    }
  });
});

describe("header transformer", () => {
  let origin: https.Server;
  let originPort: number;
  let front: net.Server;
  let frontPort: number;
  const seen: http.IncomingHttpHeaders[] = [];
  const decisions: NewDecision[] = [];
  let transforms: Transforms | undefined;
  let values: PlaceholderValues = NO_PLACEHOLDER_VALUES;
  let trusted: string[] = [];

  beforeAll(async () => {
    origin = https.createServer(
      { SNICallback: (n, cb) => originCa.contextFor(n).then((c) => cb(null, c), cb) },
      (req, res) => {
        seen.push(req.headers);
        req.resume();
        req.on("end", () => res.end(JSON.stringify({ headers: req.headers, url: req.url })));
      },
    );
    await new Promise<void>((r) => origin.listen(0, "127.0.0.1", r));
    originPort = (origin.address() as net.AddressInfo).port;
    const transformer = new HeaderTransformer({
      ca: egressCa,
      get trusted() {
        return trusted;
      },
      get placeholders() {
        return values;
      },
      teamOf: async () => "team-1",
      transformsOf: () => transforms,
      record: (d) => decisions.push(d),
      log,
    });
    front = net.createServer((client) => {
      void transformer.serve(client, Buffer.alloc(0), {
        sandboxId: "sbx",
        name: "echo.test",
        ip: "127.0.0.1",
        port: originPort,
        tls: true,
        base: { sandboxId: "sbx", protocol: "tcp", name: "echo.test", port: 443 },
      });
    });
    await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
    frontPort = (front.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    front.close();
    origin.closeAllConnections();
    origin.close();
  });

  /** Requests through the transformer as a sandbox would send them, on one kept-alive connection. */
  const agent = () => new https.Agent({ keepAlive: true, maxSockets: 1, ca: egressCa.cert });
  function get(
    a: https.Agent,
    headers: Record<string, string> = {},
  ): Promise<{ status: number; body: string; socket: unknown }> {
    return new Promise((resolve, reject) => {
      const req = https.request(
        {
          host: "127.0.0.1",
          port: frontPort,
          servername: "echo.test",
          path: "/headers",
          agent: a,
          headers: { host: "echo.test", ...headers },
        },
        (res) => {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body, socket: req.socket }));
        },
      );
      req.once("error", reject);
      req.end();
    });
  }

  it("sets the rule's headers on every request, replacing the sandbox's, and follows new rules at the next request", async () => {
    trusted = [originCa.cert];
    transforms = compileTransforms({ "echo.test": [{ transform: { headers: { "X-Test-Token": "v1" } } }] });
    const a = agent();
    try {
      const one = await get(a, { "x-test-token": "from-sandbox", accept: "*/*" });
      expect(one.status).toBe(200);
      expect(JSON.parse(one.body).headers).toMatchObject({
        "x-test-token": "v1",
        accept: "*/*",
        host: "echo.test",
      });
      transforms = compileTransforms({ "*.test": [{ transform: { headers: { "X-Other": "v2" } } }] });
      const two = await get(a, { "x-test-token": "from-sandbox" });
      // the same connection, the new rule
      expect(two.socket).toBe(one.socket);
      expect(JSON.parse(two.body).headers).toMatchObject({ "x-test-token": "from-sandbox", "x-other": "v2" });
    } finally {
      a.destroy();
    }
  });

  it("fills placeholders at request time and fails closed without a value, sending nothing", async () => {
    trusted = [originCa.cert];
    transforms = compileTransforms({
      "echo.test": [{ transform: { headers: { Authorization: "Bearer ${e2b.secrets.api_key}" } } }],
    });
    values = {
      secret: async (team, name) => (team === "team-1" && name === "api_key" ? "s3cret" : undefined),
      identityToken: async () => undefined,
    };
    const a = agent();
    try {
      expect(JSON.parse((await get(a)).body).headers.authorization).toBe("Bearer s3cret");
      values = NO_PLACEHOLDER_VALUES;
      const before = seen.length;
      const refused = await get(a);
      expect(refused.status).toBe(502);
      expect(refused.body).toContain("${e2b.secrets.api_key}");
      expect(refused.body).not.toContain("s3cret");
      expect(seen.length).toBe(before);
      expect(decisions.at(-1)).toMatchObject({
        sandboxId: "sbx",
        verdict: "denied",
        rule: expect.stringContaining("no value for ${e2b.secrets.api_key}"),
      });
    } finally {
      a.destroy();
      values = NO_PLACEHOLDER_VALUES;
    }
  });

  it("fails closed, and keeps serving, when a value cannot be read or is not a header value", async () => {
    trusted = [originCa.cert];
    transforms = compileTransforms({
      "echo.test": [{ transform: { headers: { "X-Key": "${e2b.secrets.k}" } } }],
    });
    const a = agent();
    try {
      const before = seen.length;
      values = {
        secret: async () => {
          throw new Error("store down");
        },
        identityToken: async () => undefined,
      };
      const unread = await get(a);
      expect(unread.status).toBe(502);
      expect(unread.body).toMatch(/could not be read \(header X-Key\)/);
      values = { secret: async () => "v\r\nX-Injected: 1", identityToken: async () => undefined };
      const invalid = await get(a);
      expect(invalid.status).toBe(502);
      expect(invalid.body).toMatch(/not a valid header value \(header X-Key\)/);
      expect(invalid.body).not.toContain("X-Injected");
      expect(seen.length).toBe(before);
      values = { secret: async () => "ok", identityToken: async () => undefined };
      expect(JSON.parse((await get(a)).body).headers["x-key"]).toBe("ok");
    } finally {
      a.destroy();
      values = NO_PLACEHOLDER_VALUES;
    }
  });

  it("verifies the origin: one whose CA is not trusted gets no request", async () => {
    trusted = [];
    transforms = compileTransforms({ "echo.test": [{ transform: { headers: { A: "b" } } }] });
    const a = agent();
    try {
      const before = seen.length;
      const answer = await get(a);
      expect(answer.status).toBe(502);
      expect(answer.body).toMatch(/echo\.test could not be reached/);
      expect(seen.length).toBe(before);
    } finally {
      a.destroy();
    }
  });
});

describe("placeholders only where they cannot be read on the way or by a stranger", () => {
  let origin: http.Server;
  let front: net.Server;
  let frontPort: number;
  const seen: http.IncomingHttpHeaders[] = [];
  const decisions: NewDecision[] = [];
  let transforms: Transforms | undefined;
  /** The name the sandbox's connection is for (what SNI or Host said). */
  let name = "echo.test";
  const clients = new Set<net.Socket>();
  const values: PlaceholderValues = {
    secret: async (_team, n) => (n === "s" ? "topsecret" : undefined),
    identityToken: async (_sandbox, n) => (n === "aws" ? "a.jwt.token" : undefined),
  };

  beforeAll(async () => {
    origin = http.createServer((req, res) => {
      seen.push(req.headers);
      req.resume();
      req.on("end", () => res.end(JSON.stringify({ headers: req.headers })));
    });
    await new Promise<void>((r) => origin.listen(0, "127.0.0.1", r));
    const originPort = (origin.address() as net.AddressInfo).port;
    const transformer = new HeaderTransformer({
      ca: egressCa,
      trusted: [],
      placeholders: values,
      teamOf: async () => "team-1",
      transformsOf: () => transforms,
      record: (d) => decisions.push(d),
      log,
    });
    front = net.createServer((client) => {
      clients.add(client);
      void transformer.serve(client, Buffer.alloc(0), {
        sandboxId: "sbx",
        name,
        ip: "127.0.0.1",
        port: originPort,
        tls: false,
        base: { sandboxId: "sbx", protocol: "tcp", name, port: 80 },
      });
    });
    await new Promise<void>((r) => front.listen(0, "127.0.0.1", r));
    frontPort = (front.address() as net.AddressInfo).port;
  });
  afterAll(async () => {
    for (const c of clients) c.destroy();
    front.close();
    origin.closeAllConnections();
    origin.close();
  });

  /** A plain HTTP request through the transformer, as a sandbox's `curl http://NAME/` sends it. */
  function get(): Promise<{ status: number; body: string }> {
    return new Promise((resolve, reject) => {
      const req = http.request(
        { host: "127.0.0.1", port: frontPort, path: "/", headers: { host: name }, agent: false },
        (res) => {
          let body = "";
          res.on("data", (c) => (body += c));
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
        },
      );
      req.once("error", reject);
      req.end();
    });
  }

  it("never fills a secret or an identity token over plain HTTP unless the rule allows it", async () => {
    name = "echo.test";
    for (const value of ["Bearer ${e2b.secrets.s}", "${e2b.identity.tokens.aws}"]) {
      transforms = compileTransforms({ "echo.test": [{ transform: { headers: { Authorization: value } } }] });
      const before = seen.length;
      const refused = await get();
      expect(refused.status).toBe(502);
      expect(refused.body).toContain(value.replace("Bearer ", ""));
      expect(refused.body).toMatch(/never sent over plain HTTP unless the rule sets allowPlainHttp/);
      expect(refused.body).not.toMatch(/topsecret|a\.jwt\.token/);
      expect(seen.length).toBe(before);
      expect(decisions.at(-1)).toMatchObject({
        verdict: "denied",
        rule: expect.stringMatching(/^transform echo\.test: .*never sent over plain HTTP.*request not sent$/),
      });
    }
    // a header without a placeholder is set on plain HTTP as before
    transforms = compileTransforms({ "echo.test": [{ transform: { headers: { "X-Plain": "1" } } }] });
    expect(JSON.parse((await get()).body).headers["x-plain"]).toBe("1");
    // the rule opts in
    transforms = compileTransforms({
      "echo.test": [
        { transform: { headers: { Authorization: "Bearer ${e2b.secrets.s}" }, allowPlainHttp: true } },
      ],
    });
    expect(JSON.parse((await get()).body).headers.authorization).toBe("Bearer topsecret");
  });

  it("does not fill a wildcard's placeholders for a site registered beneath a public suffix it covers", async () => {
    transforms = compileTransforms({
      "*.amazonaws.com": [
        { transform: { headers: { Authorization: "${e2b.secrets.s}" }, allowPlainHttp: true } },
      ],
    });
    name = "mybucket.s3.amazonaws.com";
    const before = seen.length;
    const refused = await get();
    expect(refused.status).toBe(502);
    expect(refused.body).toMatch(
      /not sent to mybucket\.s3\.amazonaws\.com: a site registered under a public suffix/,
    );
    expect(seen.length).toBe(before);
    // Amazon's own names under it are the rule's owner's
    name = "sts.amazonaws.com";
    expect(JSON.parse((await get()).body).headers.authorization).toBe("topsecret");
  });
});
