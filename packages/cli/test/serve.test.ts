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
});
