import react from "@vitejs/plugin-react";
import { defineConfig, type ProxyOptions } from "vite";

/**
 * `pnpm dev` serves the console with hot reload and sends everything else to a running platform
 * (`X_CONSOLE_API`, default http://localhost:3000): the API and the platform's
 * `/console/config.json`, so the dev console is on the API's origin as the built one is.
 */
const api = process.env.X_CONSOLE_API ?? "http://localhost:3000";
const apiPrefixes = [
  "/console/config.json",
  "/health",
  "/sandboxes",
  "/v2/",
  "/v3/",
  "/templates",
  "/snapshots",
  "/volumes",
  "/volumecontent",
  "/api-keys",
  "/access-tokens",
  "/teams",
  "/events",
  "/nodes",
];

export default defineConfig({
  base: "/console/",
  plugins: [react()],
  resolve: { conditions: ["@x/source"] },
  server: {
    proxy: Object.fromEntries(apiPrefixes.map((p) => [p, { target: api } satisfies ProxyOptions])),
  },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    chunkSizeWarningLimit: 400,
  },
});
