/**
 * The platform's folders and the one direction data flows between them (README "Layout"):
 *
 *   api | proxy | console → snapshots → orchestrator | templates | observability → sandbox
 *     → runtime | network | rootfs | agent → store → model → lib
 *
 * A folder may import only folders of a lower layer (never a peer, never one above), so the
 * folder graph has no cycle. The composition root (the files at the top of src/: platform.ts,
 * config.ts, index.ts, …) may import anything and no folder imports it. This test reads every import of src/ and fails on an arrow
 * that runs the wrong way, and on a drawing in the README that no longer matches the code.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";

const SRC = path.resolve(__dirname, "../../src");
const README = path.resolve(__dirname, "../../README.md");

const LAYERS: Record<string, number> = {
  lib: 0,
  model: 1,
  store: 2,
  runtime: 2,
  network: 2,
  rootfs: 2,
  agent: 2,
  sandbox: 3,
  volumes: 3,
  webhooks: 3,
  secrets: 3,
  identity: 3,
  orchestrator: 4,
  templates: 4,
  observability: 4,
  snapshots: 5,
  api: 6,
  proxy: 6,
  console: 6,
  cluster: 7,
  root: 8,
};

/**
 * Packages (other than node's own) each folder's code may use (its tests may use more): the
 * host side of envd speaks only through its generated client.
 */
const PACKAGES: Record<string, RegExp> = {
  agent: /^@x\/envd-client$/,
  proxy: /^@x\/envd-client$/,
  model: /^$/,
};

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory()
      ? sourceFiles(path.join(dir, e.name))
      : e.name.endsWith(".ts")
        ? [path.join(dir, e.name)]
        : [],
  );
}

function folderOf(file: string): string {
  const rel = path.relative(SRC, file).split(path.sep);
  return rel.length === 1 ? "root" : rel[0]!;
}

const IMPORT = /(?:^|\n)\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"|import\(\s*"([^"]+)"\s*\)/g;

interface Edge {
  from: string;
  to: string;
  file: string;
}

function imports(): { edges: Edge[]; packages: { folder: string; pkg: string; file: string }[] } {
  const edges: Edge[] = [];
  const packages: { folder: string; pkg: string; file: string }[] = [];
  for (const file of sourceFiles(SRC)) {
    const from = folderOf(file);
    for (const m of readFileSync(file, "utf8").matchAll(IMPORT)) {
      const spec = m[1] ?? m[2]!;
      const rel = path.relative(SRC, file);
      if (spec.startsWith(".")) {
        const to = folderOf(path.resolve(path.dirname(file), spec));
        if (to !== from) edges.push({ from, to, file: rel });
      } else if (!spec.startsWith("node:") && !file.endsWith(".test.ts")) {
        packages.push({ folder: from, pkg: spec, file: rel });
      }
    }
  }
  return { edges, packages };
}

test("every folder is placed in a layer", () => {
  const folders = new Set(sourceFiles(SRC).map(folderOf));
  expect([...folders].filter((f) => LAYERS[f] === undefined)).toEqual([]);
});

test("imports run from a higher layer to a lower one only", () => {
  const wrong = imports()
    .edges.filter((e) => LAYERS[e.to]! >= LAYERS[e.from]!)
    .map((e) => `${e.file}: ${e.from} → ${e.to}`);
  expect(wrong).toEqual([]);
});

test("the host side of envd, the proxy and the model use no package but their own", () => {
  const wrong = imports()
    .packages.filter((p) => PACKAGES[p.folder] && !PACKAGES[p.folder]!.test(p.pkg))
    .map((p) => `${p.file}: ${p.pkg}`);
  expect(wrong).toEqual([]);
});

test("the README draws the folder graph as it is (lib and model, which all may use, left out)", () => {
  const drawnFolders = (e: Edge) => e.from !== "root" && e.to !== "lib" && e.to !== "model";
  const actual = [
    ...new Set(
      imports()
        .edges.filter(drawnFolders)
        .map((e) => `${e.from} --> ${e.to}`),
    ),
  ].sort();
  const block = /```mermaid\n([\s\S]*?)```/.exec(readFileSync(README, "utf8"))?.[1] ?? "";
  const drawn = block
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l.includes("-->"))
    .sort();
  expect(drawn).toEqual(actual);
});
