import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { Registry } from "./metrics.js";
import { readMetricsToken, withMetricsEndpoint } from "./metrics-endpoint.js";

const TEMPLATE = "0123456789abcdef0123";

/** `/metrics` of a registry with one warm-pool gauge by template, on a loopback port. */
async function serveMetrics(token?: string): Promise<{ url: string; close(): Promise<void> }> {
  const registry = new Registry();
  registry
    .gauge("x_warm_pool_ready", "Ready.", ["template", "runtime"])
    .set({ template: TEMPLATE, runtime: "runc" }, 2);
  const rest = (_req: http.IncomingMessage, res: http.ServerResponse) => res.writeHead(404).end();
  const server = http.createServer(withMetricsEndpoint(registry, rest, () => undefined, token));
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/metrics`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe("/metrics endpoint", () => {
  it("without a token is anonymous and shows no template ids", async () => {
    const m = await serveMetrics();
    try {
      const res = await fetch(m.url);
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(text).toContain('x_warm_pool_ready{runtime="runc"} 2\n');
      expect(text).not.toContain(TEMPLATE);
    } finally {
      await m.close();
    }
  });

  it("with a token answers 401 without it, and shows template labels with it", async () => {
    const m = await serveMetrics("s3cret-token");
    try {
      const refused: Record<string, string>[] = [
        {},
        { Authorization: "Bearer wrong" },
        { Authorization: "s3cret-token" },
      ];
      for (const headers of refused) {
        const res = await fetch(m.url, { headers });
        expect(res.status).toBe(401);
        expect(res.headers.get("www-authenticate")).toBe('Bearer realm="metrics"');
        expect(await res.json()).toEqual({ code: 401, message: expect.stringContaining("metrics token") });
      }
      expect((await fetch(m.url, { method: "HEAD" })).status).toBe(401);
      const res = await fetch(m.url, { headers: { Authorization: "Bearer s3cret-token" } });
      expect(res.status).toBe(200);
      expect(await res.text()).toContain(`x_warm_pool_ready{template="${TEMPLATE}",runtime="runc"} 2\n`);
    } finally {
      await m.close();
    }
  });

  it("reads the token from its file and refuses an empty one", async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), "x-metrics-token-"));
    try {
      const file = path.join(dir, "token");
      writeFileSync(file, "  abc123\n");
      expect(await readMetricsToken(file)).toBe("abc123");
      writeFileSync(file, "\n");
      await expect(readMetricsToken(file)).rejects.toThrow(/is empty/);
      writeFileSync(file, "two words\n");
      await expect(readMetricsToken(file)).rejects.toThrow(/whitespace/);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
