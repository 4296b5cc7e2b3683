/** `GET /metrics` on the API port: the Prometheus exposition of API, sandbox and proxy metrics. */
import { DIALECTS } from "../helpers/stores.js";
import { type ApiPlatform, startApiPlatform } from "./support.js";

describe.each(DIALECTS)("Prometheus metrics on %s", (dialect) => {
  let api: ApiPlatform;

  beforeAll(async () => {
    api = await startApiPlatform(dialect);
  });

  afterAll(async () => {
    await api?.stop();
  });

  async function scrape(): Promise<string> {
    const res = await fetch(`${api.t.apiUrl}/metrics`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("text/plain; version=0.0.4; charset=utf-8");
    return res.text();
  }

  const value = (text: string, series: string) => {
    const line = text.split("\n").find((l) => l.startsWith(`${series} `));
    return line === undefined ? undefined : Number(line.slice(series.length + 1));
  };

  it("counts API requests, sandboxes by state, create latency and proxy traffic", async () => {
    const created = await api.request("POST", "/v2/sandboxes", { body: { templateID: "base" } });
    expect(created.status).toBe(201);
    const id = created.body.sandboxID as string;
    await api.request("GET", "/sandboxes/i00000000000000000000");
    await api.request("GET", "/v2/sandboxes", { key: null });
    await api.request("GET", "/no/such/path");
    const health = await fetch(`${api.t.proxyUrl}/health`, {
      headers: {
        "E2b-Sandbox-Id": id,
        "E2b-Sandbox-Port": "49983",
        "X-Access-Token": created.body.envdAccessToken,
      },
    });
    expect(health.status).toBeLessThan(300);

    const text = await scrape();
    expect(text).toContain("# TYPE x_api_requests_total counter");
    expect(value(text, 'x_api_requests_total{operation="createSandbox",status="201"}')).toBe(1);
    expect(value(text, 'x_api_requests_total{operation="getSandbox",status="404"}')).toBe(1);
    expect(value(text, 'x_api_requests_total{operation="listSandboxes",status="401"}')).toBe(1);
    expect(value(text, 'x_api_requests_total{operation="unmatched",status="404"}')).toBe(1);
    expect(value(text, 'x_api_request_duration_seconds_count{operation="createSandbox"}')).toBe(1);
    expect(value(text, 'x_api_request_duration_seconds_bucket{operation="createSandbox",le="+Inf"}')).toBe(1);
    expect(value(text, 'x_sandbox_create_duration_seconds_count{runtime="runc"}')).toBe(1);
    expect(value(text, 'x_sandbox_create_duration_seconds_sum{runtime="runc"}')).toBeGreaterThan(0);
    expect(value(text, 'x_sandboxes{state="running"}')).toBe(1);
    expect(value(text, 'x_sandboxes{state="paused"}')).toBe(0);
    expect(value(text, "x_proxy_requests_total")).toBeGreaterThanOrEqual(1);
    expect(value(text, `x_proxy_responses_total{status="${health.status}"}`)).toBeGreaterThanOrEqual(1);
    expect(value(text, 'x_proxy_bytes_total{direction="from_clients"}')).toBeGreaterThanOrEqual(0);
    expect(value(text, 'x_proxy_errors_total{kind="sandbox_not_found"}')).toBe(0);

    expect((await api.request("POST", `/sandboxes/${id}/pause`)).status).toBe(204);
    const paused = await scrape();
    expect(value(paused, 'x_sandboxes{state="running"}')).toBe(0);
    expect(value(paused, 'x_sandboxes{state="paused"}')).toBe(1);
    expect((await api.request("DELETE", `/sandboxes/${id}`)).status).toBe(204);
    expect(value(await scrape(), 'x_sandboxes{state="paused"}')).toBe(0);
  });

  it("serves /metrics without an API key and only for GET and HEAD", async () => {
    expect((await fetch(`${api.t.apiUrl}/metrics`, { method: "HEAD" })).status).toBe(200);
    const post = await fetch(`${api.t.apiUrl}/metrics`, { method: "POST" });
    expect(post.status).toBe(404);
    expect(await post.json()).toEqual({ code: 404, message: expect.any(String) });
  });
});
