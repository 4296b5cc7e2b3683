import { createRequire } from "node:module";
import path from "node:path";

/** Where the envd bundle was built: it is bind-mounted into every sandbox. */
export function envdBundleDir(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve("@x/envd/package.json")), "dist", "bundle");
}

/** Where the web console was built (`@x/console`'s `dist/`), served by the platform under `/console/`. */
export function consoleDistDir(): string {
  const require = createRequire(import.meta.url);
  return path.join(path.dirname(require.resolve("@x/console/package.json")), "dist");
}
