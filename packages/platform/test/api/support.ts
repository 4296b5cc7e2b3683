import type { Team } from "../../src/index.js";
import { checkDeclared } from "../helpers/declared-statuses.js";
import { startTestPlatform, type TestPlatform } from "../helpers/platform.js";
import { freshPostgresDatabase } from "../helpers/stores.js";

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON when the body is JSON, the text otherwise, undefined when empty. */
  // biome-ignore lint/suspicious/noExplicitAny: tests read response bodies loosely
  body: any;
}

export interface RequestOptions {
  /** The API key to send; `null` sends none. Default: the first team's. */
  key?: string | null;
  body?: unknown;
  /** Sent as is instead of `body`. */
  rawBody?: string;
  headers?: Record<string, string>;
}

export interface ApiPlatform {
  t: TestPlatform;
  /** A second team with its own key: it must see none of the first team's resources. */
  other: { team: Team; key: string };
  request(method: string, path: string, opts?: RequestOptions): Promise<ApiResponse>;
  stop(): Promise<void>;
}

/** A real platform (runc sandboxes: they start fastest) over SQLite or a fresh PostgreSQL database. */
export async function startApiPlatform(
  dialect: "sqlite" | "postgres",
  config?: NonNullable<Parameters<typeof startTestPlatform>[0]>["config"],
): Promise<ApiPlatform> {
  const db = dialect === "postgres" ? await freshPostgresDatabase() : undefined;
  const t = await startTestPlatform({ runtime: "runc", databaseUrl: db?.url, config });
  const team = await t.platform.store.teams.createTeam("Other team", "other");
  const { key } = await t.platform.store.teams.createKey(team.id, "other key");
  return {
    t,
    other: { team, key },
    request: async (method, path, opts = {}) => {
      const headers: Record<string, string> = { ...opts.headers };
      const key = opts.key === undefined ? t.apiKey : opts.key;
      if (key !== null) headers["X-API-Key"] = key;
      let body: string | undefined = opts.rawBody;
      if (opts.body !== undefined) body = JSON.stringify(opts.body);
      if (body !== undefined) headers["Content-Type"] ??= "application/json";
      const res = await fetch(`${t.apiUrl}${path}`, { method, headers, body });
      const text = await res.text();
      let parsed: unknown = text === "" ? undefined : text;
      if (text !== "" && res.headers.get("content-type")?.includes("application/json")) {
        parsed = JSON.parse(text);
      }
      checkDeclared(method, path, res.status);
      return { status: res.status, headers: res.headers, body: parsed };
    },
    stop: async () => {
      await t.stop();
      await db?.drop();
    },
  };
}
