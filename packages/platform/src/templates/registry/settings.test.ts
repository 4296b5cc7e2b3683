import { DestinationGuard } from "../../network/destination-guard.js";
import { parseImageReference } from "./reference.js";
import { pullSources, registrySettings } from "./settings.js";

describe("registrySettings", () => {
  it("keeps mirrors in order per registry and the insecure registries", () => {
    const s = registrySettings({
      mirrors: [
        "docker.io=mirror.example:5000",
        "index.docker.io=http://10.1.2.3:5000/hub/",
        "ghcr.io=https://m.example",
      ],
      insecure: ["registry.lan:5000"],
    });
    expect(s.mirrors.get("docker.io")).toEqual(["mirror.example:5000", "10.1.2.3:5000/hub"]);
    expect(s.mirrors.get("ghcr.io")).toEqual(["m.example"]);
    // an http:// mirror is spoken to over plain HTTP
    expect([...s.insecure].sort()).toEqual(["10.1.2.3:5000", "registry.lan:5000"]);
  });

  it.each([
    [{ mirrors: ["127.0.0.1:5000"] }, /not REGISTRY=MIRROR/],
    [{ mirrors: ["docker.io="] }, /registry mirror '' is not host/],
    [{ mirrors: ["docker.io=ftp://x"] }, /is not host/],
    [{ insecure: ["a b"] }, /insecure registry 'a b'/],
  ])("refuses %j", (o, message) => {
    expect(() => registrySettings(o)).toThrow(message);
  });
});

describe("pullSources", () => {
  const settings = registrySettings({
    mirrors: ["docker.io=127.0.0.1:5000", "docker.io=mirror.example/hub"],
    insecure: ["registry.lan:5000"],
  });

  it("tries the mirrors in order, then the registry", () => {
    expect(pullSources(parseImageReference("python:3.12")!, settings)).toEqual([
      {
        ref: "docker://127.0.0.1:5000/library/python:3.12",
        registry: "127.0.0.1:5000",
        mirror: true,
        insecure: true,
        credentials: false,
      },
      {
        ref: "docker://mirror.example/hub/library/python:3.12",
        registry: "mirror.example",
        mirror: true,
        insecure: false,
        credentials: false,
      },
      {
        ref: "docker://docker.io/library/python:3.12",
        registry: "docker.io",
        mirror: false,
        insecure: false,
        credentials: true,
      },
    ]);
  });

  it("sends credentials to the registry they are for, and to mirrors trusted with them only", () => {
    const trusted = registrySettings({
      mirrors: ["docker.io=127.0.0.1:5000", "docker.io=mirror.example/hub"],
      credentialMirrors: ["mirror.example"],
    });
    expect(
      pullSources(parseImageReference("python:3.12")!, trusted).map((s) => [s.registry, s.credentials]),
    ).toEqual([
      ["127.0.0.1:5000", false],
      ["mirror.example", true],
      ["docker.io", true],
    ]);
    expect(() => registrySettings({ credentialMirrors: ["elsewhere.example"] })).toThrow(/not a mirror of/);
  });

  it("allows the internal hosts the operator named: its own flag, mirrors, their registries, insecure ones", async () => {
    const s = registrySettings({
      mirrors: ["registry.lan:5000=10.1.2.3:5000/hub"],
      insecure: ["192.168.1.9:5000"],
      allowPrivate: ["10.9.0.0/16", "localhost:5001"],
    });
    const guard = new DestinationGuard({ allow: s.allowed, resolve: async () => ["10.5.5.5"] });
    const allowed = async (host: string, port: number) => (await guard.check(host, port)).allowed;
    expect(await allowed("10.1.2.3", 5000)).toBe(true);
    expect(await allowed("10.1.2.3", 5001)).toBe(false);
    expect(await allowed("registry.lan", 5000)).toBe(true);
    expect(await allowed("192.168.1.9", 5000)).toBe(true);
    expect(await allowed("10.9.200.1", 443)).toBe(true);
    expect(await allowed("localhost", 5001)).toBe(true);
    expect(await allowed("localhost", 5002)).toBe(false);
    expect(await allowed("127.0.0.1", 5000)).toBe(false);
    expect(() => registrySettings({ allowPrivate: ["10.0.0.0/99"] })).toThrow(/--allow-private-registry/);
  });

  it("speaks plain HTTP to loopback and insecure registries only", () => {
    const insecure = (raw: string) => pullSources(parseImageReference(raw)!, settings).map((s) => s.insecure);
    expect(insecure("localhost:5000/a")).toEqual([true]);
    expect(insecure("[::1]:5000/a")).toEqual([true]);
    expect(insecure("registry.lan:5000/a")).toEqual([true]);
    expect(insecure("registry.lan:5001/a")).toEqual([false]);
    expect(insecure("ghcr.io/a/b")).toEqual([false]);
  });
});
