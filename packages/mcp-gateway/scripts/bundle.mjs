// Bundles the gateway and the MCP servers it ships into dist/sandbox, which the mcp-gateway
// template's build copies as it is (templates/mcp-gateway):
//   gateway.cjs               the gateway, run by the sandbox's node ...
//   mcp-gateway               ... through this command (the template puts it on PATH)
//   servers/<name>/           each server's package files (what it reads at run time) ...
//   servers/<name>/bundle.mjs ... and the server with its dependencies in one file
//   servers/servers.json      name → package and version, what `mcp-gateway pull` checks
// The servers come from the workspace's node_modules (installed from the npm registry by
// `pnpm install`): nothing is downloaded here or in the sandbox.
import { cp, mkdir, readFile, realpath, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
const final = path.join(root, "dist", "sandbox");
const out = `${final}.tmp-${process.pid}`;
/** What of a server's package is not copied: its dependencies are in the bundle. */
const SKIPPED = new Set(["node_modules", "__tests__"]);

/** The catalog, compiled from its TypeScript source. */
async function loadCatalog() {
  const compiled = await build({
    entryPoints: [path.join(root, "src/catalog.ts")],
    bundle: true,
    platform: "node",
    format: "esm",
    // third-party code, started at every sandbox's create: smaller parses faster
    minify: true,
    write: false,
    logLevel: "warning",
  });
  const source = compiled.outputFiles[0].text;
  return (await import(`data:text/javascript;base64,${Buffer.from(source).toString("base64")}`)).CATALOG;
}

/**
 * A bundled module no longer sits where its package put it, so `import.meta.url` in the
 * server's own files is rewritten to the URL the file has in the copied package (beside the
 * bundle): what it reads relative to itself (docs, its package.json) is found there.
 */
function packageRelativeUrls(packageDir) {
  return {
    name: "package-relative-urls",
    setup(b) {
      b.onLoad({ filter: /\.(m?js|cjs)$/ }, async (args) => {
        if (!args.path.startsWith(`${packageDir}${path.sep}`)) return undefined;
        const text = await readFile(args.path, "utf8");
        if (!text.includes("import.meta.url")) return undefined;
        const relative = path.relative(packageDir, args.path).split(path.sep).join("/");
        const url = `new URL(${JSON.stringify(`./${relative}`)}, import.meta.url).href`;
        return {
          contents: text.replaceAll("import.meta.url", url),
          loader: "js",
          resolveDir: path.dirname(args.path),
        };
      });
    },
  };
}

await rm(out, { recursive: true, force: true });
await mkdir(path.join(out, "servers"), { recursive: true });

await build({
  entryPoints: [path.join(root, "src/main.ts")],
  outfile: path.join(out, "gateway.cjs"),
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
});

await writeFile(
  path.join(out, "mcp-gateway"),
  '#!/bin/sh\nexec /usr/local/bin/node /usr/local/lib/mcp-gateway/gateway.cjs "$@"\n',
  { mode: 0o755 },
);

const catalog = await loadCatalog();
const manifest = {};
for (const [name, server] of Object.entries(catalog)) {
  // the workspace's own install of it (pnpm links each dependency into node_modules)
  const packageDir = await realpath(path.join(root, "node_modules", server.package));
  const pkg = JSON.parse(await readFile(path.join(packageDir, "package.json"), "utf8"));
  const dir = path.join(out, "servers", name);
  await cp(packageDir, dir, {
    recursive: true,
    dereference: true,
    filter: (src) =>
      !path
        .relative(packageDir, src)
        .split(path.sep)
        .some((p) => SKIPPED.has(p)),
  });
  await build({
    entryPoints: [path.join(packageDir, server.entry)],
    outfile: path.join(dir, "bundle.mjs"),
    bundle: true,
    platform: "node",
    target: "node20",
    format: "esm",
    // third-party code, started at every sandbox's create: smaller parses faster
    minify: true,
    // CommonJS dependencies inside an ES module bundle still call require()
    banner: {
      js: 'import { createRequire as __xGatewayCreateRequire } from "node:module"; const require = __xGatewayCreateRequire(import.meta.url);',
    },
    plugins: [packageRelativeUrls(packageDir)],
    legalComments: "none",
    logLevel: "error",
  });
  manifest[name] = { title: server.title, package: server.package, version: pkg.version };
}
await writeFile(path.join(out, "servers", "servers.json"), `${JSON.stringify(manifest, null, 2)}\n`);

const old = `${final}.old-${process.pid}`;
await rename(final, old).catch(() => undefined);
await rename(out, final);
await rm(old, { recursive: true, force: true });
