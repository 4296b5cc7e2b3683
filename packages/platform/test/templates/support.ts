import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { RuntimeName } from "../../src/runtime/container-runtime.js";
import { pointE2bClient, startTestPlatform, TEST_DATA_DIR, type TestPlatform } from "../helpers/platform.js";
import { type DIALECTS, freshPostgresDatabase } from "../helpers/stores.js";

export type Dialect = (typeof DIALECTS)[number];

export interface ApiResponse {
  status: number;
  headers: Headers;
  body: any;
}

export interface TemplatePlatform {
  t: TestPlatform;
  /** Points the public e2b client (Sandbox, Template) at this platform. */
  useClient(): void;
  api(method: string, path: string, body?: unknown, key?: string): Promise<ApiResponse>;
  /** A scratch directory removed on stop. */
  scratch(): string;
  stop(): Promise<void>;
}

/**
 * A real platform for template tests over SQLite or a fresh PostgreSQL database, with the e2b
 * client's environment set while it runs.
 */
export async function startTemplatePlatform(
  runtime: RuntimeName,
  dialect: Dialect = "sqlite",
  config: NonNullable<Parameters<typeof startTestPlatform>[0]>["config"] = {},
  /** How the platform resolves the hosts tenants name (no name resolves by default). */
  resolveHost?: (name: string) => Promise<string[]>,
): Promise<TemplatePlatform> {
  const db = dialect === "postgres" ? await freshPostgresDatabase() : undefined;
  const t = await startTestPlatform({
    runtime,
    databaseUrl: db?.url,
    config,
    ...(resolveHost ? { resolveHost } : {}),
  }).catch(async (err: unknown) => {
    await db?.drop();
    throw err;
  });
  let restoreEnv: (() => void) | undefined;
  const dirs: string[] = [];
  return {
    t,
    useClient: () => {
      // the environment as it was before the first call is what stop() puts back
      const restore = pointE2bClient(t);
      restoreEnv ??= restore;
    },
    api: async (method, p, body, key = t.apiKey) => {
      const res = await fetch(`${t.apiUrl}${p}`, {
        method,
        headers: { "X-API-Key": key, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      return { status: res.status, headers: res.headers, body: text ? JSON.parse(text) : undefined };
    },
    scratch: () => {
      const dir = mkdtempSync(path.join(os.tmpdir(), "x-template-test-"));
      dirs.push(dir);
      return dir;
    },
    stop: async () => {
      restoreEnv?.();
      try {
        // what this platform's builds left in the shared data directory: its own layers and uploads
        const { store } = t.platform;
        const layers = [...(await store.templates.referencedLayers())].filter((l) => l.startsWith("layers/"));
        const teams = await store.teams.listTeams();
        await t.stop();
        for (const layer of layers) rmSync(path.join(TEST_DATA_DIR, layer), { recursive: true, force: true });
        for (const team of teams)
          rmSync(path.join(TEST_DATA_DIR, "uploads", team.id), { recursive: true, force: true });
        for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
      } finally {
        await db?.drop();
      }
    },
  };
}
