import { createHash } from "node:crypto";
import { getSignature } from "e2b";
import { ENVD_PORT, parseTarget, signedFileMatcher } from "./routing.js";

describe("parseTarget", () => {
  test.each([
    ["49983-abc123.localhost", { sandboxID: "abc123", port: 49983 }],
    ["3000-i1a2b3.sandbox.example.com:443", { sandboxID: "i1a2b3", port: 3000 }],
    ["8080-sbx-with-dash.localhost", { sandboxID: "sbx-with-dash", port: 8080 }],
    ["5-abc:8000", { sandboxID: "abc", port: 5 }],
  ])("host %s", (host, expected) => {
    expect(parseTarget(undefined, undefined, host)).toEqual(expected);
  });

  test.each([
    "localhost",
    "localhost:3000",
    "0-abc.localhost",
    "65536-abc.localhost",
    "-abc.localhost",
    "80-.localhost",
    "x80-abc.localhost",
    "[::1]:80",
    "80-a%b.localhost",
  ])("no route in host %s", (host) => {
    expect(parseTarget(undefined, undefined, host)).toBeUndefined();
  });

  test("headers win over the host; the port defaults to envd's", () => {
    expect(parseTarget("sbx1", "3000", "80-other.localhost")).toEqual({ sandboxID: "sbx1", port: 3000 });
    expect(parseTarget("sbx1", undefined, undefined)).toEqual({ sandboxID: "sbx1", port: ENVD_PORT });
    expect(parseTarget("sbx1, sbx1", "49983, 49983", undefined)).toEqual({ sandboxID: "sbx1", port: 49983 });
  });

  test("malformed headers are no route rather than a guess", () => {
    expect(parseTarget("sbx1", "http", "80-other.localhost")).toBeUndefined();
    expect(parseTarget("../etc", "80", undefined)).toBeUndefined();
  });
});

describe("signedFileMatcher", () => {
  // what the e2b client's getSignature computes: v1_ + base64(sha256(path:op:user:token[:exp])) unpadded
  const sign = (raw: string) => `v1_${createHash("sha256").update(raw).digest("base64").replace(/=+$/, "")}`;

  test("matches only the token that signed a read, with or without expiration and user", () => {
    const exp = Math.floor(Date.now() / 1000) + 60;
    const url = `/files?path=hello.txt&signature=${encodeURIComponent(sign(`hello.txt:read::tok-a:${exp}`))}&signature_expiration=${exp}`;
    const matches = signedFileMatcher("GET", url);
    expect(matches?.("tok-a")).toBe(true);
    expect(matches?.("tok-b")).toBe(false);
    const asRoot = `/files?path=%2Froot%2Fa&username=root&signature=${encodeURIComponent(sign("/root/a:read:root:tok-b"))}`;
    expect(signedFileMatcher("GET", asRoot)?.("tok-b")).toBe(true);
  });

  test("agrees with the public e2b client's getSignature", async () => {
    const sig = await getSignature({
      path: "hello.txt",
      operation: "write",
      user: undefined,
      expirationInSeconds: 10,
      envdAccessToken: "secret",
    });
    const url = `/files?path=hello.txt&signature=${encodeURIComponent(sig.signature)}&signature_expiration=${sig.expiration}`;
    expect(signedFileMatcher("POST", url)?.("secret")).toBe(true);
  });

  test("the operation comes from the method: a read signature does not route a write", () => {
    const url = `/files?path=f&signature=${encodeURIComponent(sign("f:read::t"))}`;
    expect(signedFileMatcher("POST", url)?.("t")).toBe(false);
    const write = `/files?path=f&signature=${encodeURIComponent(sign("f:write::t"))}`;
    expect(signedFileMatcher("POST", write)?.("t")).toBe(true);
  });

  test.each([
    ["GET", "/files?path=f"],
    ["GET", "/health?signature=v1_x"],
    ["DELETE", "/files?path=f&signature=v1_x"],
    ["GET", "/files?path=f&signature=nope"],
  ])("%s %s is not a signed file request", (method, url) => {
    expect(signedFileMatcher(method, url)).toBeUndefined();
  });
});
