// Bundles envd into one CommonJS file that a plain `node` starts fast, next to the native
// addons it loads at run time (envd's own: inotify and xattrs, spawn, copy_file_range).
import { access, chmod, cp, mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const final = path.join(root, "dist", "bundle");
// Built beside the final place and swapped in at the end, so a process starting envd from
// dist/bundle (a test, a platform) never sees a half-written bundle.
const out = `${final}.tmp-${process.pid}`;

/** protobuf-es's base64 module, swapped for src/fast-base64.ts (see there why). */
function fastBase64() {
  return {
    name: "fast-base64",
    setup(b) {
      b.onResolve({ filter: /(^|\/)base64-encoding(\.js)?$/ }, (args) =>
        args.importer.includes(`${path.sep}@bufbuild${path.sep}protobuf${path.sep}`)
          ? { path: path.join(root, "src", "fast-base64.ts") }
          : undefined,
      );
    },
  };
}

/** `@bufbuild/protobuf` as connect-es imports it, swapped for src/connect-protobuf.ts (see there why). */
function connectProtobuf() {
  return {
    name: "connect-protobuf",
    setup(b) {
      b.onResolve({ filter: /^@bufbuild\/protobuf$/ }, (args) =>
        args.importer.includes(`${path.sep}@connectrpc${path.sep}`)
          ? { path: path.join(root, "src", "connect-protobuf.ts") }
          : undefined,
      );
    },
  };
}

await rm(out, { recursive: true, force: true });
await build({
  entryPoints: [path.join(root, "src", "main.ts")],
  outfile: path.join(out, "envd.cjs"),
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  conditions: ["@x/source"],
  external: ["./native/*"],
  minifySyntax: true,
  sourcemap: "linked",
  legalComments: "none",
  logLevel: "warning",
  plugins: [fastBase64(), connectProtobuf()],
});

// `sudo` of gVisor sandboxes (src/sudo/shim.ts), bound over the template's: run by the
// platform's Node that every sandbox has at /opt/x/bin/node.
await build({
  entryPoints: [path.join(root, "src", "sudo", "shim.ts")],
  outfile: path.join(out, "sudo.cjs"),
  bundle: true,
  platform: "node",
  target: "node20",
  format: "cjs",
  minifySyntax: true,
  legalComments: "none",
  logLevel: "warning",
  banner: { js: "#!/opt/x/bin/node" },
});
await chmod(path.join(out, "sudo.cjs"), 0o755);

// envd's own addons (inotify and xattr; copy_file_range), built by
// `node-gyp rebuild --directory native` at install; src/** loads them from `native/` beside the bundle.
const built = path.join(root, "native", "build", "Release");
await access(path.join(built, "envd_native.node")).catch(() => {
  throw new Error(
    `${built} has no addons: run \`pnpm install\` (or \`node-gyp rebuild --directory native\`) in packages/envd`,
  );
});
await mkdir(path.join(out, "native"), { recursive: true });
for (const file of await readdir(built)) {
  if (file.endsWith(".node")) await cp(path.join(built, file), path.join(out, "native", file));
}

// libc shims preloaded into gVisor sandboxes (see native/*-compat.c).
await cp(path.join(root, "native", "build", "compat"), path.join(out, "compat"), { recursive: true });

const old = `${final}.old-${process.pid}`;
await rename(final, old).catch(() => undefined);
await rename(out, final);
await rm(old, { recursive: true, force: true });
