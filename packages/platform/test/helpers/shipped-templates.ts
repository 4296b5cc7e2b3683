import { execFile } from "node:child_process";
import { mkdirSync, rmdirSync, statSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { startTestPlatform, TEST_DATA_DIR } from "./platform.js";

/**
 * The templates that ship with the platform (code-interpreter-v1, desktop) are built once per
 * machine into a store of their own beside the cached base image, and every suite that needs
 * them starts its platforms on that store. Building pulls Debian's packages, so the platform
 * that builds is the only test platform given the host's resolvers; it is stopped before any
 * test runs. Later runs find every step cached and take seconds.
 */
export const SHIPPED_STORE = `sqlite:${path.join(TEST_DATA_DIR, "shipped-templates.db")}`;

const X_BIN = path.resolve(__dirname, "../../../cli/bin/x.mjs");
const LOCK = path.join(TEST_DATA_DIR, "shipped-templates.lock");
const run = promisify(execFile);

/** Set by the suite's global set-up once it has installed every shipped template. */
export const READY_ENV = "X_TEST_SHIPPED_TEMPLATES_READY";

/**
 * Installs `names` with `x template install`, as an operator does; one caller at a time. The
 * suite's global set-up installs them all before any test file runs (so no build competes with
 * the tests for the CPU); a file run on its own installs what it needs here.
 */
export async function installShippedTemplates(names: string[]): Promise<void> {
  const ready = (process.env[READY_ENV] ?? "").split(",");
  if (names.every((n) => ready.includes(n))) return;
  await withLock(async () => {
    const t = await startTestPlatform({
      runtime: "runc",
      databaseUrl: SHIPPED_STORE,
      config: { dnsUpstreams: undefined },
    });
    try {
      await run(
        process.execPath,
        [X_BIN, "template", "install", ...names, "--api-url", t.apiUrl, "--database-url", SHIPPED_STORE],
        {
          maxBuffer: 256 * 1024 * 1024,
          timeout: 40 * 60_000,
          env: { ...process.env, X_DATA_DIR: TEST_DATA_DIR },
        },
      ).catch((err: { stderr?: string; message: string }) => {
        throw new Error(
          `x template install ${names.join(" ")} failed: ${err.message}\n${(err.stderr ?? "").slice(-4000)}`,
        );
      });
    } finally {
      await t.stop();
    }
  });
}

/** A directory as the lock: made by one process at a time; one older than an hour is a leftover. */
async function withLock(fn: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      const age = Date.now() - (statSync(LOCK, { throwIfNoEntry: false })?.mtimeMs ?? Date.now());
      if (age > 3_600_000) rmdirSync(LOCK);
      else await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    await fn();
  } finally {
    rmdirSync(LOCK);
  }
}
