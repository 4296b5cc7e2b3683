import { formatReference, isLoopbackRegistry, parseImageReference } from "./reference.js";

describe("parseImageReference", () => {
  it.each([
    ["python:3.12", "docker.io/library/python:3.12"],
    ["python", "docker.io/library/python:latest"],
    ["oven/bun:1", "docker.io/oven/bun:1"],
    ["index.docker.io/library/debian:12", "docker.io/library/debian:12"],
    ["docker://ubuntu:22.04", "docker.io/library/ubuntu:22.04"],
    ["ghcr.io/org/team/app:v1.0", "ghcr.io/org/team/app:v1.0"],
    ["127.0.0.1:5000/test/img:1", "127.0.0.1:5000/test/img:1"],
    ["localhost/img", "localhost/img:latest"],
    ["[::1]:5000/img:2", "[::1]:5000/img:2"],
    ["registry:5000/img", "registry:5000/img:latest"],
    [`alpine@sha256:${"a".repeat(64)}`, `docker.io/library/alpine@sha256:${"a".repeat(64)}`],
    // the digest wins, as Docker pulls by it
    [`h.io/x:tag@sha256:${"b".repeat(64)}`, `h.io/x@sha256:${"b".repeat(64)}`],
  ])("%s is %s", (raw, full) => {
    const ref = parseImageReference(raw);
    expect(ref && formatReference(ref)).toBe(full);
  });

  it("splits registry, repository, tag and digest", () => {
    expect(parseImageReference("127.0.0.1:5000/test/img:1")).toEqual({
      registry: "127.0.0.1:5000",
      repository: "test/img",
      tag: "1",
    });
    expect(parseImageReference(`host.example/a@sha256:${"c".repeat(64)}`)).toEqual({
      registry: "host.example",
      repository: "a",
      digest: `sha256:${"c".repeat(64)}`,
    });
  });

  it.each([
    "",
    "Python:3",
    "python:",
    "python:bad tag",
    "a//b",
    "img@sha256:short",
    "-lead/x",
    "host:99999999/x",
    "/abs/path",
  ])("refuses %j", (raw) => {
    expect(parseImageReference(raw)).toBeUndefined();
  });

  it("names a mirror's copy with the mirror's host", () => {
    const ref = parseImageReference("python:3.12")!;
    expect(formatReference(ref, "127.0.0.1:5000")).toBe("127.0.0.1:5000/library/python:3.12");
  });
});

describe("isLoopbackRegistry", () => {
  it.each([
    ["127.0.0.1:5000", true],
    ["127.8.9.10", true],
    ["localhost:5000", true],
    ["LOCALHOST", true],
    ["[::1]:5000", true],
    ["docker.io", false],
    ["10.0.0.1:5000", false],
    ["127.0.0.1.example.com", false],
    ["localhost.example:5000", false],
  ])("%s: %s", (registry, loopback) => {
    expect(isLoopbackRegistry(registry)).toBe(loopback);
  });
});
