import { Registry } from "./metrics.js";

describe("Prometheus registry", () => {
  it("renders counters, gauges and histograms in the text format", async () => {
    const registry = new Registry();
    const requests = registry.counter("app_requests_total", "Requests.", ["op", "status"]);
    const live = registry.gauge("app_live", "Live things.");
    const latency = registry.histogram("app_latency_seconds", "Latency.", ["op"], [0.1, 1, 0.5]);
    requests.inc({ op: "get", status: "200" });
    requests.inc({ status: "200", op: "get" }, 2);
    requests.inc({ op: 'we"ird\\op\n', status: "500" });
    live.set({}, 3);
    for (const v of [0.05, 0.1, 0.7, 2]) latency.observe({ op: "get" }, v);

    expect(await registry.render()).toBe(
      [
        "# HELP app_requests_total Requests.",
        "# TYPE app_requests_total counter",
        'app_requests_total{op="get",status="200"} 3',
        'app_requests_total{op="we\\"ird\\\\op\\n",status="500"} 1',
        "# HELP app_live Live things.",
        "# TYPE app_live gauge",
        "app_live 3",
        "# HELP app_latency_seconds Latency.",
        "# TYPE app_latency_seconds histogram",
        'app_latency_seconds_bucket{op="get",le="0.1"} 2',
        'app_latency_seconds_bucket{op="get",le="0.5"} 2',
        'app_latency_seconds_bucket{op="get",le="1"} 3',
        'app_latency_seconds_bucket{op="get",le="+Inf"} 4',
        'app_latency_seconds_sum{op="get"} 2.85',
        'app_latency_seconds_count{op="get"} 4',
        "",
      ].join("\n"),
    );
  });

  it("runs collectors before rendering and refuses bad or duplicate names", async () => {
    const registry = new Registry();
    const gauge = registry.gauge("things", "Things.", ["kind"]);
    let n = 0;
    registry.onCollect(() => {
      gauge.clear();
      gauge.set({ kind: "a" }, ++n);
    });
    expect(await registry.render()).toContain('things{kind="a"} 1');
    expect(await registry.render()).toContain('things{kind="a"} 2');
    expect(() => registry.counter("things", "again")).toThrow(/twice/);
    expect(() => registry.counter("bad-name", "x")).toThrow(/invalid/);
    expect(() => registry.histogram("h", "x", ["le"], [1])).toThrow(/reserved/);
  });
});

describe("tenant labels", () => {
  function registryWithPools(): Registry {
    const registry = new Registry();
    const ready = registry.gauge("pool_ready", "Ready.", ["template", "runtime"]);
    const takes = registry.counter("pool_takes_total", "Takes.", ["template", "runtime", "result"]);
    const boot = registry.histogram("boot_seconds", "Boots.", ["template"], [1, 5]);
    ready.set({ template: "aaaaaaaaaaaaaaaaaaaa", runtime: "runc" }, 2);
    ready.set({ template: "bbbbbbbbbbbbbbbbbbbb", runtime: "runc" }, 3);
    ready.set({ template: "bbbbbbbbbbbbbbbbbbbb", runtime: "runsc" }, 1);
    takes.set({ template: "aaaaaaaaaaaaaaaaaaaa", runtime: "runc", result: "hit" }, 4);
    takes.set({ template: "bbbbbbbbbbbbbbbbbbbb", runtime: "runc", result: "hit" }, 5);
    boot.observe({ template: "aaaaaaaaaaaaaaaaaaaa" }, 0.5);
    boot.observe({ template: "bbbbbbbbbbbbbbbbbbbb" }, 3);
    return registry;
  }

  it("sums away template labels unless asked to keep them", async () => {
    const anonymous = await registryWithPools().render();
    expect(anonymous).not.toContain("template=");
    expect(anonymous).not.toMatch(/aaaa|bbbb/);
    expect(anonymous).toContain('pool_ready{runtime="runc"} 5\n');
    expect(anonymous).toContain('pool_ready{runtime="runsc"} 1\n');
    expect(anonymous).toContain('pool_takes_total{runtime="runc",result="hit"} 9\n');
    expect(anonymous).toContain('boot_seconds_bucket{le="1"} 1\n');
    expect(anonymous).toContain('boot_seconds_bucket{le="5"} 2\n');
    expect(anonymous).toContain("boot_seconds_sum 3.5\n");
    expect(anonymous).toContain("boot_seconds_count 2\n");

    const operator = await registryWithPools().render({ tenantLabels: true });
    expect(operator).toContain('pool_ready{template="aaaaaaaaaaaaaaaaaaaa",runtime="runc"} 2\n');
    expect(operator).toContain('pool_ready{template="bbbbbbbbbbbbbbbbbbbb",runtime="runsc"} 1\n');
    expect(operator).toContain('boot_seconds_count{template="bbbbbbbbbbbbbbbbbbbb"} 1\n');
  });
});
