/**
 * Every ```ts snippet of the packages' READMEs, run as is against a real platform (runc), so
 * the READMEs cannot rot. A snippet is a whole ES module, as a user would paste it into a
 * file: it imports the packages by name and takes its connection from the environment
 * (X_API_URL, X_SANDBOX_URL, X_API_KEY), which this test points at its platform. Each one is
 * bundled with esbuild (the `@x/*` packages from their sources) and run by node in a child
 * process, in a scratch working directory; it must exit 0 and leave no sandbox, snapshot or
 * template behind.
 *
 * A snippet fenced as ```ts no-run (one that needs a set-up of its own, such as starting a
 * platform or envd) is bundled only: its imports must exist, but it does not run. Every snippet,
 * run or not, is also type-checked (esbuild only strips types), as users' editors would.
 */
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { startTemplatePlatform, type TemplatePlatform } from "../../platform/test/templates/support.js";
import { type ConnectionOptions, Sandbox, Snapshot } from "../src/index.js";

/** esbuild's build options, typed through tsup (which brings esbuild; the SDK does not depend on it). */
type BuildOptions = Parameters<NonNullable<import("tsup").Options["esbuildOptions"]>>[0];
const esbuild = createRequire(require.resolve("tsup"))("esbuild") as {
  build(options: BuildOptions): Promise<unknown>;
};

const packagesDir = path.resolve(__dirname, "../..");
const READMES = ["sdk", "envd-client", "platform-client", "platform", "envd"];
/** Native modules and addons a bundle cannot inline; only no-run snippets reach them. */
const EXTERNAL = ["better-sqlite3", "pg", "pg-native", "./native/*", "*.node"];

interface Snippet {
  name: string;
  /** Line of the README where the code starts. */
  line: number;
  code: string;
  run: boolean;
}

function snippets(pkg: string): Snippet[] {
  const file = path.join(packagesDir, pkg, "README.md");
  const lines = readFileSync(file, "utf8").split("\n");
  const found: Snippet[] = [];
  for (let i = 0; i < lines.length; i++) {
    const open = /^```ts(?:\s+(.*))?$/.exec(lines[i] ?? "");
    if (!open) continue;
    const start = i + 1;
    const end = lines.indexOf("```", start);
    if (end < 0) throw new Error(`${file}:${i + 1}: the \`\`\`ts block is not closed`);
    const info = (open[1] ?? "").trim();
    if (info !== "" && info !== "no-run") throw new Error(`${file}:${i + 1}: unknown fence info "${info}"`);
    found.push({
      name: `${pkg}/README.md:${i + 1}`,
      line: start + 1,
      code: lines.slice(start, end).join("\n"),
      run: info !== "no-run",
    });
    i = end;
  }
  return found;
}

const all = READMES.flatMap((pkg) => snippets(pkg).map((s) => ({ ...s, pkg })));

async function bundle(snippet: Snippet & { pkg: string }, outfile: string): Promise<void> {
  await esbuild.build({
    stdin: {
      contents: snippet.code,
      loader: "ts",
      resolveDir: path.join(packagesDir, snippet.pkg),
      sourcefile: snippet.name,
    },
    outfile,
    bundle: true,
    platform: "node",
    format: "esm",
    target: "node20",
    conditions: ["@x/source"],
    // what a snippet imports besides the `@x/*` packages (node:*, @connectrpc/connect-node, ...)
    nodePaths: ["sdk", "envd", "platform"].map((pkg) => path.join(packagesDir, pkg, "node_modules")),
    external: EXTERNAL,
    // bundled CommonJS dependencies call require(): give the ES module one
    banner: {
      js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);",
    },
    logLevel: "silent",
    plugins: [
      {
        name: "workspace-sources",
        setup(b) {
          b.onResolve({ filter: /^@x\/(sdk|envd|envd-client|platform|platform-client)$/ }, (args) => ({
            path: path.join(packagesDir, args.path.slice("@x/".length), "src", "index.ts"),
          }));
        },
      },
    ],
  });
}

/** Type errors of the snippets, as `README:line: message`, with the packages from their sources. */
function typeErrors(dir: string): string[] {
  const ts = require("typescript") as typeof import("typescript");
  const files = new Map<string, Snippet>();
  all.forEach((snippet, i) => {
    const file = path.join(dir, `snippet-${i}.mts`);
    writeFileSync(file, snippet.code);
    files.set(file, snippet);
  });
  const paths: Record<string, string[]> = {
    "@connectrpc/connect-node": [
      path.join(packagesDir, "envd/node_modules/@connectrpc/connect-node/dist/esm/index.d.ts"),
    ],
  };
  for (const pkg of ["sdk", "envd", "envd-client", "platform", "platform-client"])
    paths[`@x/${pkg}`] = [path.join(packagesDir, pkg, "src/index.ts")];
  // E2B's own packages, which the README shows against this platform (devDependencies of the SDK)
  for (const name of ["@e2b/code-interpreter", "@e2b/desktop"])
    paths[name] = [path.join(packagesDir, "sdk/node_modules", name, "dist/index.d.mts")];
  const program = ts.createProgram([...files.keys()], {
    target: ts.ScriptTarget.ES2022,
    lib: ["lib.es2023.d.ts", "lib.dom.d.ts"],
    module: ts.ModuleKind.NodeNext,
    moduleResolution: ts.ModuleResolutionKind.NodeNext,
    customConditions: ["@x/source"],
    strict: true,
    noUncheckedIndexedAccess: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: ["node"],
    typeRoots: [path.resolve(packagesDir, "../node_modules/@types")],
    paths,
  });
  return ts
    .getPreEmitDiagnostics(program)
    .filter((d) => d.file && files.has(d.file.fileName))
    .map((d) => {
      const snippet = files.get(d.file?.fileName ?? "") as Snippet;
      const { line } = ts.getLineAndCharacterOfPosition(
        d.file as import("typescript").SourceFile,
        d.start ?? 0,
      );
      const at = `${snippet.name.replace(/:\d+$/, "")}:${snippet.line + line}`;
      return `${at}: ${ts.flattenDiagnosticMessageText(d.messageText, "\n")}`;
    });
}

let p: TemplatePlatform;
let options: ConnectionOptions;
let scratch: string;

beforeAll(async () => {
  p = await startTemplatePlatform("runc");
  options = { apiUrl: p.t.apiUrl, sandboxUrl: p.t.proxyUrl, apiKey: p.t.apiKey };
});

beforeEach(() => {
  scratch = mkdtempSync(path.join(os.tmpdir(), "x-readme-snippet-"));
});

afterEach(async () => {
  rmSync(scratch, { recursive: true, force: true });
  // Every snippet kills what it starts and deletes what it makes. What one leaves is removed
  // after the check, so that the snippets after it are judged on their own.
  const sandboxes = await Sandbox.list(options);
  for (const s of sandboxes) await Sandbox.kill(s.sandboxID, options);
  const snapshots = (await p.api("GET", "/snapshots")).body as { snapshotID: string }[];
  for (const s of snapshots) await Snapshot.delete(s.snapshotID, options);
  const templates = (await p.api("GET", "/templates")).body as { templateID: string }[];
  for (const t of templates) await p.api("DELETE", `/templates/${t.templateID}`);
  expect({ sandboxes, snapshots, templates }).toEqual({ sandboxes: [], snapshots: [], templates: [] });
});

afterAll(async () => {
  await p?.stop();
});

describe("README snippets", () => {
  it("finds the snippets", () => {
    for (const pkg of READMES) expect(all.filter((s) => s.pkg === pkg).length).toBeGreaterThan(0);
  });

  it("type-checks every snippet", () => {
    expect(typeErrors(scratch)).toEqual([]);
  });

  it.each(all.map((s) => [s.run ? "runs" : "bundles (no-run)", s.name, s] as const))(
    "%s %s",
    async (_what, _name, snippet) => {
      const outfile = path.join(scratch, "snippet.mjs");
      await bundle(snippet, outfile);
      if (!snippet.run) return;
      try {
        await promisify(execFile)(process.execPath, [outfile], {
          cwd: scratch,
          timeout: 240_000,
          maxBuffer: 64 * 1024 * 1024,
          env: {
            ...process.env,
            X_API_URL: p.t.apiUrl,
            X_SANDBOX_URL: p.t.proxyUrl,
            X_API_KEY: p.t.apiKey,
          },
        });
      } catch (err) {
        const { code, stdout, stderr } = err as { code?: unknown; stdout?: string; stderr?: string };
        throw new Error(`${snippet.name} failed (exit ${String(code)}):\n${stderr}\n${stdout}`);
      }
    },
  );
});
