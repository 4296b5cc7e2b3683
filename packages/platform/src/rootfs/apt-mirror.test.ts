import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { hostAptMirrors, parseAptSources } from "./apt-mirror.js";

test("reads deb822 stanzas and one-line entries", () => {
  const text = [
    "Types: deb",
    "URIs: http://mirror.example/debian",
    "Suites: bookworm bookworm-updates",
    "Components: main",
    "",
    "Types: deb-src",
    "URIs: http://src.example/debian",
    "Suites: bookworm",
    "",
    "deb [arch=amd64] http://old.example/debian-security bookworm-security main",
  ].join("\n");
  expect(parseAptSources(text)).toEqual([
    { uri: "http://old.example/debian-security", suites: ["bookworm-security"] },
    { uri: "http://mirror.example/debian", suites: ["bookworm", "bookworm-updates"] },
  ]);
});

test("finds the host's mirrors for a suite and falls back to deb.debian.org", async () => {
  const dir = await mkdtemp(join(tmpdir(), "apt-"));
  try {
    await mkdir(join(dir, "sources.list.d"));
    await writeFile(
      join(dir, "sources.list.d", "debian.sources"),
      "Types: deb\nURIs: http://m.example/debian/\nSuites: bookworm\n",
    );
    expect(await hostAptMirrors("bookworm", dir)).toEqual({
      main: "http://m.example/debian",
      security: "http://deb.debian.org/debian-security",
    });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
