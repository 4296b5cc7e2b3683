import { serveConfig } from "../src/serve.js";

describe("x serve registry options", () => {
  it("takes repeated mirror and insecure registry flags, or comma lists from the environment", () => {
    const flags = serveConfig([
      "--registry-mirror",
      "docker.io=127.0.0.1:5000",
      "--registry-mirror",
      "docker.io=http://mirror.lan:5000",
      "--insecure-registry",
      "registry.lan:5000",
    ]);
    expect(flags.config.registryMirrors).toEqual([
      "docker.io=127.0.0.1:5000",
      "docker.io=http://mirror.lan:5000",
    ]);
    expect(flags.config.insecureRegistries).toEqual(["registry.lan:5000"]);

    const saved = { ...process.env };
    try {
      process.env.X_REGISTRY_MIRRORS = "docker.io=m1:5000, ghcr.io=m2";
      process.env.X_INSECURE_REGISTRIES = "a:1,b:2";
      expect(serveConfig([]).config).toMatchObject({
        registryMirrors: ["docker.io=m1:5000", "ghcr.io=m2"],
        insecureRegistries: ["a:1", "b:2"],
      });
      delete process.env.X_REGISTRY_MIRRORS;
      delete process.env.X_INSECURE_REGISTRIES;
      const none = serveConfig([]).config;
      expect(none.registryMirrors).toBeUndefined();
      expect(none.insecureRegistries).toBeUndefined();
    } finally {
      process.env = saved;
    }
  });

  it("takes the internal registries and webhook destinations an operator allows, and mirrors trusted with credentials", () => {
    const flags = serveConfig([
      "--registry-mirror",
      "docker.io=mirror.lan:5000",
      "--allow-private-registry",
      "registry.lan:5000",
      "--allow-private-registry",
      "10.1.2.0/24",
      "--send-credentials-to-mirror",
      "mirror.lan:5000",
      "--allow-private-webhooks",
      "127.0.0.1:8080",
    ]);
    expect(flags.config).toMatchObject({
      allowPrivateRegistries: ["registry.lan:5000", "10.1.2.0/24"],
      credentialMirrors: ["mirror.lan:5000"],
      allowPrivateWebhooks: ["127.0.0.1:8080"],
    });
    const saved = { ...process.env };
    try {
      process.env.X_ALLOW_PRIVATE_REGISTRIES = "a.lan, 10.0.0.0/8";
      process.env.X_ALLOW_PRIVATE_WEBHOOKS = "hooks.lan";
      expect(serveConfig([]).config).toMatchObject({
        allowPrivateRegistries: ["a.lan", "10.0.0.0/8"],
        allowPrivateWebhooks: ["hooks.lan"],
      });
    } finally {
      process.env = saved;
    }
    const none = serveConfig([]).config;
    expect(none.allowPrivateRegistries).toBeUndefined();
    expect(none.allowPrivateWebhooks).toBeUndefined();
    expect(() => serveConfig(["--allow-private-registry", "10.0.0.0/40"])).toThrow(
      /--allow-private-registry '10.0.0.0\/40' is not HOST/,
    );
    expect(() => serveConfig(["--allow-private-webhooks", "http://x"])).toThrow(
      /--allow-private-webhooks 'http:\/\/x' is not HOST/,
    );
    expect(() => serveConfig(["--send-credentials-to-mirror", "other.lan"])).toThrow(
      /'other.lan' is not a mirror of --registry-mirror/,
    );
  });

  it("refuses a mirror that is not REGISTRY=MIRROR before starting anything", () => {
    expect(() => serveConfig(["--registry-mirror", "127.0.0.1:5000"])).toThrow(/not REGISTRY=MIRROR/);
    expect(() => serveConfig(["--insecure-registry", "not a host"])).toThrow(
      /insecure registry 'not a host'/,
    );
  });
});
