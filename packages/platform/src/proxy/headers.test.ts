import type http from "node:http";
import { downstreamH2Headers, downstreamRawHeaders, rawFromH2, upstreamRequestHeaders } from "./headers.js";

function pairs(raw: string[]): [string, string][] {
  const out: [string, string][] = [];
  for (let i = 0; i < raw.length; i += 2) out.push([raw[i]!, raw[i + 1]!]);
  return out;
}

describe("upstreamRequestHeaders", () => {
  const raw = [
    "Host",
    "80-sbx.localhost",
    "Connection",
    "keep-alive, X-Secret",
    "X-Secret",
    "1",
    "Transfer-Encoding",
    "chunked",
    "Expect",
    "100-continue",
    "Upgrade",
    "websocket",
    "X-Forwarded-For",
    "10.0.0.1",
    "X-Forwarded-Proto",
    "https",
    "Content-Type",
    "text/plain",
  ];

  test("drops hop-by-hop headers and replaces untrusted X-Forwarded-*", () => {
    const out = pairs(
      upstreamRequestHeaders(raw, { clientAddress: "192.0.2.7", trusted: false, upgrade: false }),
    );
    expect(out).toEqual([
      ["Host", "80-sbx.localhost"],
      ["Content-Type", "text/plain"],
      ["X-Forwarded-For", "192.0.2.7"],
      ["X-Forwarded-Proto", "http"],
      ["X-Forwarded-Host", "80-sbx.localhost"],
    ]);
  });

  test("sends a masked Host, keeping the original in X-Forwarded-Host", () => {
    const out = pairs(
      upstreamRequestHeaders(raw, {
        clientAddress: "192.0.2.7",
        trusted: false,
        upgrade: false,
        host: "internal.example:80",
      }),
    );
    expect(out[0]).toEqual(["Host", "internal.example:80"]);
    expect(out).toContainEqual(["X-Forwarded-Host", "80-sbx.localhost"]);
  });

  test("extends trusted X-Forwarded-* and keeps Upgrade for upgrades", () => {
    const out = pairs(
      upstreamRequestHeaders(raw, { clientAddress: "192.0.2.7", trusted: true, upgrade: true }),
    );
    expect(out).toContainEqual(["Upgrade", "websocket"]);
    expect(out).toContainEqual(["Connection", "Upgrade"]);
    expect(out).toContainEqual(["X-Forwarded-For", "10.0.0.1, 192.0.2.7"]);
    expect(out).toContainEqual(["X-Forwarded-Proto", "https"]);
  });
});

test("rawFromH2 turns :authority into Host and skips pseudo-headers", () => {
  const raw = rawFromH2({ ":method": "GET", ":path": "/", ":authority": "80-sbx.localhost", accept: "*/*" });
  expect(pairs(raw)).toEqual([
    ["host", "80-sbx.localhost"],
    ["accept", "*/*"],
  ]);
});

test("response headers lose connection-specific ones for both protocols", () => {
  const rawHeaders = [
    "Content-Type",
    "text/plain",
    "Transfer-Encoding",
    "chunked",
    "Connection",
    "keep-alive",
    "Keep-Alive",
    "timeout=5",
  ];
  expect(downstreamRawHeaders(rawHeaders)).toEqual(["Content-Type", "text/plain"]);
  const res = {
    statusCode: 200,
    headers: {
      "content-type": "text/plain",
      "transfer-encoding": "chunked",
      connection: "keep-alive",
      "keep-alive": "timeout=5",
    },
  } as unknown as http.IncomingMessage;
  expect(downstreamH2Headers(res)).toEqual({ ":status": 200, "content-type": "text/plain" });
});
