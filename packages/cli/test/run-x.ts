import { execFileSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import { Readable } from "node:stream";
import { main } from "../src/index.js";

export interface Run {
  code: number;
  out: string;
  err: string;
}

const text = (t: string | Uint8Array) => (typeof t === "string" ? t : Buffer.from(t).toString());

/** Runs `x …` in this process with its output captured; `onOut` sees stdout as it comes. */
export async function x(
  argv: string[],
  opts: { stdin?: string; onOut?: (soFar: string) => void } = {},
): Promise<Run> {
  let out = "";
  let err = "";
  const code = await main(argv, {
    out: (t) => {
      out += text(t);
      opts.onOut?.(out);
    },
    err: (t) => {
      err += text(t);
    },
    ...(opts.stdin === undefined ? {} : { stdin: Readable.from([Buffer.from(opts.stdin)]) }),
    tty: false,
  });
  return { code, out, err };
}

/** Runs `x …` with stdout kept as bytes. */
export async function xBytes(argv: string[]): Promise<{ code: number; out: Buffer }> {
  const chunks: Buffer[] = [];
  const code = await main(argv, {
    out: (t) => chunks.push(Buffer.from(t)),
    err: () => undefined,
    tty: false,
  });
  return { code, out: Buffer.concat(chunks) };
}

/** Runs `x … --json` and parses its output, failing with what it printed otherwise. */
export async function xJson<T = unknown>(argv: string[]): Promise<T> {
  const r = await x([...argv, "--json"]);
  if (r.code !== 0) throw new Error(`x ${argv.join(" ")} exited ${r.code}: ${r.err}`);
  return JSON.parse(r.out) as T;
}

/** The connection environment variables, cleared so each test sets what it means. */
export const CONNECTION_ENV = [
  "X_API_URL",
  "X_PROXY_URL",
  "X_SANDBOX_URL",
  "X_API_KEY",
  "X_DOMAIN",
  "E2B_API_URL",
  "E2B_SANDBOX_URL",
  "E2B_API_KEY",
  "E2B_DOMAIN",
];

const PACKAGE_DIR = path.resolve(__dirname, "..");

/** The x command as users run it; it loads dist/ (see ensureBuilt). */
export const X_BIN = path.join(PACKAGE_DIR, "bin", "x.mjs");

function newest(dir: string): number {
  return Math.max(
    ...readdirSync(dir, { withFileTypes: true }).map((e) =>
      e.isDirectory() ? newest(path.join(dir, e.name)) : statSync(path.join(dir, e.name)).mtimeMs,
    ),
  );
}

/** Builds dist/ when a source is newer than it (CI builds the workspace before the tests). */
export function ensureBuilt(): void {
  const dist = path.join(PACKAGE_DIR, "dist", "index.js");
  if (existsSync(dist) && statSync(dist).mtimeMs >= newest(path.join(PACKAGE_DIR, "src"))) return;
  execFileSync("pnpm", ["exec", "tsup"], { cwd: PACKAGE_DIR, stdio: "ignore" });
}
