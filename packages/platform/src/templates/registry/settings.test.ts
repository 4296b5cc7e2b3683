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
      },
      {
        ref: "docker://mirror.example/hub/library/python:3.12",
        registry: "mirror.example",
        mirror: true,
        insecure: false,
      },
      {
        ref: "docker://docker.io/library/python:3.12",
        registry: "docker.io",
        mirror: false,
        insecure: false,
      },
    ]);
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
