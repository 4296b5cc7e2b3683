import { createHash } from "node:crypto";
import { silentLogger } from "../lib/log.js";
import { SandboxPools } from "./exchanges.js";
import { SandboxLocator } from "./locate.js";
import { newProxyMetrics } from "./metrics.js";
import type { SignedFileMatch } from "./routing.js";

// what the e2b client's getSignature computes: v1_ + base64(sha256(path:op:user:token)) unpadded
const sign = (raw: string) => `v1_${createHash("sha256").update(raw).digest("base64").replace(/=+$/, "")}`;
const url = (path: string, token: string) =>
  `/files?path=${encodeURIComponent(path)}&signature=${encodeURIComponent(sign(`${path}:read::${token}`))}`;

/** A locator over running sandboxes with these tokens, counting the searches through them. */
function locatorOver(tokens: Record<string, string>) {
  const searched = { count: 0 };
  const locator = new SandboxLocator({
    resolver: {
      resolve: async () => undefined,
      resolveSigned: async (matches: SignedFileMatch) => {
        searched.count++;
        return Object.entries(tokens).find(([, token]) => matches(token))?.[0];
      },
    },
    log: silentLogger,
    metrics: newProxyMetrics(),
    pools: new SandboxPools({ maxSockets: 1, idleTimeoutMs: 1000 }),
  });
  return { locator, searched };
}

describe("signed file URLs that name no sandbox", () => {
  it("searches the tokens once per signed request, however often it is repeated", async () => {
    const { locator, searched } = locatorOver({ sbx_a: "tok-a", sbx_b: "tok-b" });
    for (let i = 0; i < 1000; i++)
      expect(await locator.signedTarget("GET", url("/home/user/f.txt", "tok-b"), "198.51.100.1")).toEqual({
        sandboxID: "sbx_b",
        port: 49983,
      });
    expect(searched.count).toBe(1);
  });

  it("answers a client whose URLs keep matching nothing 429, without searching again", async () => {
    const { locator, searched } = locatorOver({ sbx_a: "tok-a" });
    const known = url("f", "tok-a");
    expect(await locator.signedTarget("GET", known, "198.51.100.1")).toMatchObject({ sandboxID: "sbx_a" });
    searched.count = 0;
    const answers = [];
    for (let i = 0; i < 1000; i++)
      answers.push(await locator.signedTarget("GET", `/files?path=x${i}&signature=v1_x`, "198.51.100.1"));
    expect(answers.slice(0, 20)).toEqual(Array(20).fill(undefined));
    expect(answers.slice(20).every((a) => a && "status" in a && a.status === 429)).toBe(true);
    expect(answers[20]).toMatchObject({ kind: "rate_limited", body: { code: 429 } });
    // bounded by the burst, not by the requests
    expect(searched.count).toBe(20);
    // another client is not held back by it, nor a URL already found (no search needed)
    expect(await locator.signedTarget("GET", "/files?path=y&signature=v1_y", "198.51.100.2")).toBeUndefined();
    expect(await locator.signedTarget("GET", known, "198.51.100.1")).toEqual({
      sandboxID: "sbx_a",
      port: 49983,
    });
    expect(searched.count).toBe(21);
  });
});
