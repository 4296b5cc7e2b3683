import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { createEnvdClient, type EnvdClient } from "@x/envd-client";

export const BUNDLE = path.resolve(__dirname, "../../dist/bundle/envd.cjs");

export interface RunningEnvd {
  url: string;
  port: number;
  accessToken: string | undefined;
  child: ChildProcess;
  /** Client as the default user, with the access token. */
  client: EnvdClient;
  /** Everything envd wrote to stderr so far. */
  logs(): string;
  stop(): Promise<void>;
}

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() =>
        typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port")),
      );
    });
  });
}

/** Starts the real envd bundle as a child process on a free loopback port. */
export async function startEnvd(
  opts: { accessToken?: string; env?: Record<string, string>; defaultUser?: string; port?: number } = {},
): Promise<RunningEnvd> {
  const port = opts.port ?? (await freePort());
  let stderr = "";
  const child = spawn(process.execPath, [BUNDLE], {
    env: {
      ...process.env,
      ENVD_PORT: String(port),
      ENVD_HOST: "127.0.0.1",
      ENVD_DEFAULT_USER: opts.defaultUser ?? "root",
      // No sandbox identity (E2B_SANDBOX…, /run/e2b files) unless a test asks for it.
      ENVD_RUN_DIR: "",
      ...(opts.accessToken ? { ENVD_ACCESS_TOKEN: opts.accessToken } : {}),
      ...opts.env,
    },
    stdio: ["ignore", "ignore", "pipe"],
  });
  child.stderr?.on("data", (d: Buffer) => {
    stderr += d.toString();
  });
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 10_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`envd exited early (${child.exitCode}): ${stderr}`);
    const ok = await fetch(`${url}/health`, {
      headers: opts.accessToken ? { "X-Access-Token": opts.accessToken } : {},
    })
      .then((r) => r.status < 500)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > deadline) throw new Error(`envd did not become ready: ${stderr}`);
    await new Promise((r) => setTimeout(r, 20));
  }
  return {
    url,
    port,
    accessToken: opts.accessToken,
    child,
    client: createEnvdClient({ baseUrl: url, accessToken: opts.accessToken }),
    logs: () => stderr,
    stop: () =>
      new Promise<void>((resolve) => {
        if (child.exitCode !== null) return resolve();
        child.once("exit", () => resolve());
        child.kill("SIGKILL");
      }),
  };
}

/** A fresh temporary directory for one test file. */
export function tempDir(prefix = "envd-test-"): string {
  return mkdtempSync(path.join(os.tmpdir(), prefix));
}
