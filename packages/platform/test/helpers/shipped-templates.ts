import { execFile } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { promisify } from "node:util";
import { startTestPlatform, TEST_DATA_DIR } from "./platform.js";
import { X_BIN } from "./x-serve.js";

/**
 * The templates that ship with the platform (code-interpreter-v1, desktop, mcp-gateway) are
 * built once per machine into a store of their own beside the cached base image, and every
 * suite that needs them starts its platforms on that store. Building pulls Debian's packages, so the platform
 * that builds is the only test platform given the host's resolvers; it is stopped before any
 * test runs. Later runs find every step cached and take seconds.
 */
export const SHIPPED_STORE = `sqlite:${path.join(TEST_DATA_DIR, "shipped-templates.db")}`;

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

/**
 * A file as the lock, holding its owner's pid: made by one process at a time. A lock whose owner
 * is gone (a killed run) is a leftover and is taken over at once.
 */
async function withLock(fn: () => Promise<void>): Promise<void> {
  for (;;) {
    try {
      writeFileSync(LOCK, String(process.pid), { flag: "wx" });
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      let owner = 0;
      try {
        owner = Number(readFileSync(LOCK, "utf8"));
      } catch {
        // gone meanwhile, or not a lock file of ours: taken over below
      }
      if (!isAlive(owner)) rmSync(LOCK, { force: true, recursive: true });
      else await new Promise((r) => setTimeout(r, 1000));
    }
  }
  try {
    await fn();
  } finally {
    rmSync(LOCK, { force: true });
  }
}

function isAlive(pid: number): boolean {
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === "EPERM";
  }
}
