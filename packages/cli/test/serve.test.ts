import { DEFAULTS } from "@x/platform";
import { serveConfig } from "../src/serve.js";

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
