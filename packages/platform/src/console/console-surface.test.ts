import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { consoleSurface, withConsole } from "./console-surface.js";

describe("the console's surface", () => {
  let dir: string;
  let server: http.Server;
  let base: string;
  const config = {
    version: "0.1.0",
    domain: "sandbox.localhost",
    envdUrl: "http://49983-{sandboxID}.sandbox.localhost:3002",
    cluster: false,
  };

  beforeAll(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), "x-console-"));
    mkdirSync(path.join(dir, "assets"));
    writeFileSync(path.join(dir, "index.html"), "<!doctype html><title>console</title>");
    writeFileSync(path.join(dir, "assets", "app-1a2b.js"), "console.log(1)");
    const surface = consoleSurface({ distDir: dir, config });
    server = http.createServer((req, res) => {
      if (!surface?.(req, res)) res.writeHead(418).end("api");
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });

  afterAll(async () => {
    await new Promise<void>((resolve) => server.close(() => resolve()));
    rmSync(dir, { recursive: true, force: true });
  });

  it("serves the app, its routes and its config, and leaves the API alone", async () => {
    const page = await fetch(`${base}/console/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain("<title>console</title>");
    expect(page.headers.get("cache-control")).toBe("no-cache");
    expect(page.headers.get("content-security-policy")).toContain(
      "connect-src 'self' http://*.sandbox.localhost:3002",
    );
    // the app routes itself: any path under /console/ is its page
    expect(await (await fetch(`${base}/console/sandboxes/i123`)).text()).toContain("<title>console</title>");
    const asset = await fetch(`${base}/console/assets/app-1a2b.js`);
    expect(asset.headers.get("cache-control")).toContain("immutable");
    expect(await asset.text()).toBe("console.log(1)");
    expect(await (await fetch(`${base}/console/config.json`)).json()).toEqual(config);

    const redirect = await fetch(`${base}/console`, { redirect: "manual" });
    expect([redirect.status, redirect.headers.get("location")]).toEqual([302, "/console/"]);
    const root = await fetch(`${base}/`, { redirect: "manual", headers: { accept: "text/html" } });
    expect(root.headers.get("location")).toBe("/console/");
    expect((await fetch(`${base}/`)).status).toBe(418);
    expect((await fetch(`${base}/v2/sandboxes`)).status).toBe(418);
    const post = await fetch(`${base}/console/`, { method: "POST" });
    expect(post.status).toBe(405);
    expect(await post.json()).toEqual({ code: 405, message: "POST is not allowed on /console/" });
  });

  it("is absent when the console was not built", () => {
    expect(consoleSurface({ distDir: path.join(dir, "nope"), config })).toBeUndefined();
    expect(withConsole(undefined, config)).toEqual([]);
  });
});
