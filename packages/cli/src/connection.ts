import { createPlatformClient, type PlatformClient } from "@x/platform-client";
import { SandboxError } from "@x/sdk";

/** The options every client command takes: where the platform is and the team's key. */
export const CONNECTION_OPTIONS = {
  "api-url": { type: "string" },
  "proxy-url": { type: "string" },
  domain: { type: "string" },
  "api-key": { type: "string" },
  json: { type: "boolean", default: false },
  help: { type: "boolean", short: "h", default: false },
} as const;

export const CONNECTION_HELP = `connection (flags, then the environment):
  --api-url URL      platform API (X_API_URL, E2B_API_URL; default http://localhost:3000)
  --proxy-url URL    sandbox proxy (X_PROXY_URL, X_SANDBOX_URL, E2B_SANDBOX_URL; default http://localhost:3002)
  --domain NAME      derive both: https://api.NAME and https://NAME (X_DOMAIN, E2B_DOMAIN)
  --api-key KEY      team API key (X_API_KEY, E2B_API_KEY); 'x keys create NAME' makes one
  --json             machine-readable output
`;

/** A failure to show the user as is (no stack), with the exit code to leave with. */
export class CliError extends Error {
  constructor(
    message: string,
    readonly exitCode = 1,
    /** The HTTP status the platform answered with, when it did. */
    readonly status?: number,
  ) {
    super(message);
    this.name = "CliError";
  }
}

export interface Connection {
  apiUrl: string;
  proxyUrl: string;
  apiKey: string;
  api: PlatformClient;
}

export type ConnectionValues = Record<string, string | boolean | string[] | undefined>;

function env(...names: string[]): string | undefined {
  for (const name of names) if (process.env[name]) return process.env[name];
  return undefined;
}

/** Where the platform's API and sandbox proxy are, from flags and then the environment. */
export function endpoints(values: ConnectionValues): { apiUrl: string; proxyUrl: string } {
  const flag = (name: string) => values[name] as string | undefined;
  const domain = flag("domain") ?? env("X_DOMAIN", "E2B_DOMAIN");
  return {
    apiUrl:
      flag("api-url") ??
      env("X_API_URL", "E2B_API_URL") ??
      (domain ? `https://api.${domain}` : "http://localhost:3000"),
    proxyUrl:
      flag("proxy-url") ??
      env("X_PROXY_URL", "X_SANDBOX_URL", "E2B_SANDBOX_URL") ??
      (domain ? `https://${domain}` : "http://localhost:3002"),
  };
}

/** Resolves flags and environment into a connection; refuses to go on without a key. */
export function connect(values: ConnectionValues): Connection {
  const { apiUrl, proxyUrl } = endpoints(values);
  const apiKey = (values["api-key"] as string | undefined) ?? env("X_API_KEY", "E2B_API_KEY");
  if (!apiKey) {
    throw new CliError(
      "no API key: run `x keys create NAME` on the platform's host and set X_API_KEY (or pass --api-key)",
    );
  }
  return { apiUrl, proxyUrl, apiKey, api: createPlatformClient({ baseUrl: apiUrl, apiKey }) };
}

/** The SDK's connection options for the same platform. */
export function sdkOptions(conn: Connection): { apiUrl: string; sandboxUrl: string; apiKey: string } {
  return { apiUrl: conn.apiUrl, sandboxUrl: conn.proxyUrl, apiKey: conn.apiKey };
}

const UNREACHABLE = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EHOSTUNREACH",
  "ECONNRESET",
  "EAI_AGAIN",
  "ETIMEDOUT",
]);

/** Why the platform could not be reached (an errno code or fetch's reason), if that is the failure. */
function networkFailure(err: unknown): string | undefined {
  let fetchFailed = false;
  for (let e: unknown = err, depth = 0; e && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && UNREACHABLE.has(code)) return code;
    if (e instanceof TypeError && e.message === "fetch failed") fetchFailed = true;
    else if (fetchFailed && e instanceof Error) return e.message;
    e = (e as { cause?: unknown }).cause;
  }
  return fetchFailed ? "fetch failed" : undefined;
}

/** The message for an error a command did not expect: network failures get the next step. */
export function explain(err: unknown, conn?: Pick<Connection, "apiUrl" | "proxyUrl">): string {
  const reason = networkFailure(err);
  if (reason) {
    const where = conn ? `the platform at ${conn.apiUrl}` : "the platform";
    return `cannot reach ${where} (${reason}): is \`x serve\` running? Point --api-url / X_API_URL at it`;
  }
  if (err instanceof CliError || err instanceof SandboxError) return err.message;
  return err instanceof Error ? err.message : String(err);
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/**
 * Awaits an API call: its data and response, or a CliError saying what went wrong and what to
 * do (`what` names the action, e.g. "killing sandbox abc").
 */
export async function call<T>(
  conn: Connection,
  what: string,
  request: Promise<FetchResult<T>>,
): Promise<{ data: T; response: Response }> {
  let result: FetchResult<T>;
  try {
    result = await request;
  } catch (err) {
    throw new CliError(explain(err, conn));
  }
  const { response } = result;
  if (response.ok) return { data: result.data as T, response };
  const body = result.error;
  const message =
    body && typeof body === "object" && "message" in body && typeof body.message === "string"
      ? body.message
      : `HTTP ${response.status}`;
  if (response.status === 401) {
    throw new CliError(
      `${what}: the platform refused the API key (${message}): create one with \`x keys create NAME\` and set X_API_KEY`,
    );
  }
  throw new CliError(`${what}: ${message}`, 1, response.status);
}

/** Every page of a paginated list (cursor in `X-Next-Token`). */
export async function allPages<T>(
  conn: Connection,
  what: string,
  page: (nextToken: string | undefined) => Promise<FetchResult<T[]>>,
): Promise<T[]> {
  const all: T[] = [];
  let nextToken: string | undefined;
  do {
    const { data, response } = await call(conn, what, page(nextToken));
    all.push(...data);
    nextToken = response.headers.get("X-Next-Token") || undefined;
  } while (nextToken);
  return all;
}
