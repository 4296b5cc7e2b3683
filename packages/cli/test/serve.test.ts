import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { DEFAULTS } from "@x/platform";
import { exited, XServe } from "../../platform/test/helpers/x-serve.js";
import { serveConfig } from "../src/serve.js";
import { ensureBuilt, x } from "./run-x.js";

describe("x serve options", () => {
  it("takes the network prefix and address pool from flags, the environment, or the defaults", () => {
    const flags = serveConfig(["--network-prefix", "ab1", "--network-cidr", "10.250.0.0/16", "--port", "0"]);
    expect(flags.config).toMatchObject({ networkPrefix: "ab1", networkCidr: "10.250.0.0/16", apiPort: 0 });

    const saved = { ...process.env };
    try {
      process.env.X_NETWORK_PREFIX = "cd2";
      process.env.X_NETWORK_CIDR = "10.251.0.0/16";
      expect(serveConfig([]).config).toMatchObject({ networkPrefix: "cd2", networkCidr: "10.251.0.0/16" });
      delete process.env.X_NETWORK_PREFIX;
      delete process.env.X_NETWORK_CIDR;
      expect(serveConfig([]).config).toMatchObject({
        networkPrefix: DEFAULTS.networkPrefix,
        networkCidr: DEFAULTS.networkCidr,
      });
    } finally {
      process.env = saved;
    }
  });

  it("takes the console and build log caps from flags or the environment, none by default", () => {
    const flags = serveConfig([
      "--console-log-max",
      "2",
      "--build-log-max-lines",
      "1000",
      "--build-log-max",
      "8",
    ]);
    expect(flags.config).toMatchObject({ consoleLogMaxMB: 2, buildLogMaxLines: 1000, buildLogMaxMB: 8 });
    const saved = { ...process.env };
    try {
      process.env.X_CONSOLE_LOG_MAX = "6";
      expect(serveConfig([]).config.consoleLogMaxMB).toBe(6);
    } finally {
      process.env = saved;
    }
    const defaults = serveConfig([]).config;
    expect([defaults.consoleLogMaxMB, defaults.buildLogMaxLines, defaults.buildLogMaxMB]).toEqual([
      undefined,
      undefined,
      undefined,
    ]);
    expect(() => serveConfig(["--console-log-max", "0"])).toThrow(
      "--console-log-max must be a whole number ≥ 1, got 0",
    );
  });

  it("takes the runtimes tenants may ask for from a flag or the environment, every one by default", () => {
    expect(serveConfig(["--tenant-runtimes", "runsc"]).config.tenantRuntimes).toEqual(["runsc"]);
    expect(serveConfig(["--tenant-runtimes", "runsc, runc"]).config.tenantRuntimes).toEqual([
      "runsc",
      "runc",
    ]);
    expect(serveConfig([]).config.tenantRuntimes).toBeUndefined();
    const saved = { ...process.env };
    try {
      process.env.X_TENANT_RUNTIMES = "runsc";
      expect(serveConfig([]).config.tenantRuntimes).toEqual(["runsc"]);
    } finally {
      process.env = saved;
    }
    expect(() => serveConfig(["--tenant-runtimes", "kata"])).toThrow(
      "--tenant-runtimes: 'kata' is not a runtime (runsc, runc)",
    );
    expect(() => serveConfig(["--tenant-runtimes", ","])).toThrow("name at least one runtime");
  });

  it("takes the metrics token file from a flag or the environment, none by default", () => {
    expect(serveConfig(["--metrics-token-file", "/etc/x/metrics-token"]).config.metricsTokenFile).toBe(
      "/etc/x/metrics-token",
    );
    const saved = { ...process.env };
    try {
      delete process.env.X_METRICS_TOKEN_FILE;
      expect(serveConfig([]).config.metricsTokenFile).toBeUndefined();
      process.env.X_METRICS_TOKEN_FILE = "/run/secrets/metrics";
      expect(serveConfig([]).config.metricsTokenFile).toBe("/run/secrets/metrics");
    } finally {
      process.env = saved;
    }
  });
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Resolves once `x serve`'s output matches, failing with it when the process ends first. */
async function waitFor(serve: XServe, pattern: RegExp, withinMs = 120_000): Promise<void> {
  for (const deadline = Date.now() + withinMs; !pattern.test(serve.output); await sleep(100)) {
    if (serve.ended) throw new Error(`x serve ended before ${pattern}:\n${serve.output}`);
    if (Date.now() > deadline) throw new Error(`no ${pattern} in ${withinMs} ms:\n${serve.output}`);
  }
}

/** How the process ended, waiting at most `withinMs` for it. */
async function ending(serve: XServe, withinMs = 60_000) {
  const child = serve.child!;
  await Promise.race([exited(child), sleep(withinMs)]);
  return { code: child.exitCode, signal: child.signalCode };
}

describe("x serve stops cleanly", () => {
  let templates: string;

  beforeAll(() => {
    ensureBuilt();
    // a code-interpreter-v1 of the test's own, so the demo's install is a long local build
    // (the real one takes minutes of Debian's packages)
    templates = mkdtempSync(path.join(os.tmpdir(), "x-serve-stop-templates-"));
    const dir = path.join(templates, "code-interpreter-v1");
    mkdirSync(dir);
    writeFileSync(path.join(dir, "template.yaml"), "name: code-interpreter-v1\ndockerfile: e2b.Dockerfile\n");
    writeFileSync(path.join(dir, "e2b.Dockerfile"), "FROM base\nRUN sleep 600\n");
  });

  afterAll(() => rmSync(templates, { recursive: true, force: true }));

  it("Ctrl-C on the README's 'pnpm x serve --demo', during the demo, ends the whole pipeline with 0", async () => {
    const serve = new XServe(["--runtime", "runc", "--pool-size", "1", "--demo"], "pnpm");
    try {
      await serve.spawn({ X_TEMPLATES_DIR: templates });
      // the first demo is done and the install of code-interpreter-v1 is under way
      await waitFor(serve, /demo: sandbox killed/);
      await sleep(2000);
      // a terminal's Ctrl-C: SIGINT to the foreground process group (pnpm passes one on too)
      serve.signal("SIGINT");
      expect(await ending(serve)).toEqual({ code: 0, signal: null });
      expect(serve.output).toContain("x: shutting down");
      expect(serve.output).not.toContain("ELIFECYCLE");
      // the demo's key went with it
      const keys = await x(["keys", "list", "--json", "--data-dir", serve.dataDir]);
      expect(keys.code).toBe(0);
      expect(JSON.parse(keys.out).map((k: { name: string }) => k.name)).not.toContain("demo");
    } finally {
      await serve.cleanup();
    }
  });

  it("SIGTERM to x serve, and the same again at once, ends it with 0", async () => {
    const serve = new XServe(["--runtime", "runc", "--pool-size", "1"]);
    try {
      await serve.start();
      serve.signal("SIGTERM");
      await sleep(50);
      serve.signal("SIGTERM");
      expect(await ending(serve)).toEqual({ code: 0, signal: null });
      expect(serve.output).toContain("x: shutting down");
    } finally {
      await serve.cleanup();
    }
  });
});
