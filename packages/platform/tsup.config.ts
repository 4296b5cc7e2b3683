import { defineConfig } from "tsup";

// Server package: ESM only; dependencies, workspace ones included, stay external.
export default defineConfig({
  entry: ["src/index.ts"],
  format: ["esm"],
  sourcemap: true,
  clean: true,
  target: "node20",
});
