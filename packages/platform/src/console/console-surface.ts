/**
 * The web console on the API's port: its built files (the `@x/console` package's `dist/`)
 * under `/console/`, any other path there answered with its `index.html` (the app routes
 * itself), and `/console/config.json`, what the app needs of the platform that the API does
 * not say (where envd is reached through the proxy). A surface of the front door (front-door.ts).
 */
import { existsSync } from "node:fs";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import sirv from "sirv";

/** What the console's app is told at `/console/config.json`. */
export interface ConsoleConfig {
  version: string;
  /** The sandboxes' domain. */
  domain: string;
  /** How a page reaches a sandbox's envd through the proxy: `{sandboxID}` stands for the ID. */
  envdUrl: string;
  /** Whether this API fronts a cluster of nodes. */
  cluster: boolean;
}

export interface ConsoleSurfaceOptions {
  /** The app's built files: `index.html` and `assets/`. */
  distDir: string;
  config: ConsoleConfig;
}

export type Surface = (req: IncomingMessage, res: ServerResponse) => boolean;

export const CONSOLE_PATH = "/console";

/** The origin pattern of envd URLs, for the page's Content-Security-Policy `connect-src`. */
function envdOrigins(envdUrl: string): string {
  const url = new URL(envdUrl.replace("{sandboxID}", "sandbox"));
  const host = url.hostname.split(".").slice(1).join(".");
  return `${url.protocol}//*.${host}${url.port ? `:${url.port}` : ""}`;
}

/**
 * The console as a surface, or undefined when its files are not there (a platform built without
 * it): the API works the same either way.
 */
export function consoleSurface(o: ConsoleSurfaceOptions): Surface | undefined {
  if (!existsSync(path.join(o.distDir, "index.html"))) return undefined;
  const files = sirv(o.distDir, {
    single: true,
    etag: true,
    dev: false,
    // hashed names never change content; the page itself is checked every time
    setHeaders: (res, pathname) => {
      res.setHeader(
        "Cache-Control",
        pathname.startsWith("/assets/") ? "public, max-age=31536000, immutable" : "no-cache",
      );
    },
  });
  const config = JSON.stringify(o.config);
  const securityHeaders = {
    "Content-Security-Policy": [
      "default-src 'self'",
      `connect-src 'self' ${envdOrigins(o.config.envdUrl)}`,
      "img-src 'self' data: blob:",
      // the terminal and charts set element styles
      "style-src 'self' 'unsafe-inline'",
      "frame-ancestors 'none'",
    ].join("; "),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
  };

  return (req, res) => {
    const url = req.url ?? "/";
    const pathname = url.split("?")[0] as string;
    const method = req.method ?? "GET";
    const browserAtRoot = pathname === "/" && (req.headers.accept ?? "").includes("text/html");
    if (pathname === CONSOLE_PATH || browserAtRoot) {
      res.writeHead(302, { Location: `${CONSOLE_PATH}/` }).end();
      return true;
    }
    if (!pathname.startsWith(`${CONSOLE_PATH}/`)) return false;
    if (method !== "GET" && method !== "HEAD") {
      res.writeHead(405, { Allow: "GET, HEAD", "Content-Type": "application/json" });
      res.end(JSON.stringify({ code: 405, message: `${method} is not allowed on ${pathname}` }));
      return true;
    }
    for (const [name, value] of Object.entries(securityHeaders)) res.setHeader(name, value);
    if (pathname === `${CONSOLE_PATH}/config.json`) {
      res.writeHead(200, { "Content-Type": "application/json", "Cache-Control": "no-cache" }).end(config);
      return true;
    }
    req.url = url.slice(CONSOLE_PATH.length);
    files(req, res, () => {
      res.writeHead(404, { "Content-Type": "application/json" });
      res.end(JSON.stringify({ code: 404, message: `no such file: ${pathname}` }));
    });
    return true;
  };
}

/** The console's surface as a list of none or one, for a front door's `surfaces`. */
export function withConsole(distDir: string | undefined, config: ConsoleConfig): Surface[] {
  const surface = distDir ? consoleSurface({ distDir, config }) : undefined;
  return surface ? [surface] : [];
}
