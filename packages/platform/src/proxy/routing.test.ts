import { ENVD_PORT, parseTarget } from "./routing.js";

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
