import { createEnvdClient, type EnvdClient } from "@x/envd-client";
import { createPlatformClient, type PlatformClient } from "@x/platform-client";
import { fromHttpError, fromUnknown } from "./errors.js";

/** Where the platform is and who is calling; every field falls back to the environment. */
export interface ConnectionOptions {
  /** Team API key; `X_API_KEY`, then `E2B_API_KEY`. */
  apiKey?: string;
  /** Platform API; `X_API_URL`, then `E2B_API_URL`, then `http://localhost:3000`. */
  apiUrl?: string;
  /** Sandbox proxy that envd traffic goes through; `X_SANDBOX_URL`, then `E2B_SANDBOX_URL`, then `http://localhost:3002`. */
  sandboxUrl?: string;
  /** fetch implementation for every call; the global one by default. */
  fetch?: typeof globalThis.fetch;
}

export interface ResolvedConnection {
  apiKey?: string;
  apiUrl: string;
  sandboxUrl: string;
  fetch?: typeof globalThis.fetch;
}

function env(name: string): string | undefined {
  const value = typeof process === "undefined" ? undefined : process.env?.[name];
  return value || undefined;
}

export function resolveConnection(opts: ConnectionOptions = {}): ResolvedConnection {
  return {
    apiKey: opts.apiKey ?? env("X_API_KEY") ?? env("E2B_API_KEY"),
    apiUrl: opts.apiUrl ?? env("X_API_URL") ?? env("E2B_API_URL") ?? "http://localhost:3000",
    sandboxUrl: opts.sandboxUrl ?? env("X_SANDBOX_URL") ?? env("E2B_SANDBOX_URL") ?? "http://localhost:3002",
    fetch: opts.fetch,
  };
}

export function platformClient(conn: ResolvedConnection): PlatformClient {
  return createPlatformClient({ baseUrl: conn.apiUrl, apiKey: conn.apiKey, fetch: conn.fetch });
}

export function envdClient(conn: ResolvedConnection, sandboxId: string, accessToken?: string): EnvdClient {
  return createEnvdClient({ baseUrl: conn.sandboxUrl, sandboxId, accessToken, fetch: conn.fetch });
}

interface FetchResult<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** Awaits an openapi-fetch call and returns its data, or throws the SDK's error for it. */
export async function unwrap<T>(context: string, call: Promise<FetchResult<T>>): Promise<T> {
  let result: FetchResult<T>;
  try {
    result = await call;
  } catch (err) {
    throw fromUnknown(err, context);
  }
  if (!result.response.ok) throw fromHttpError(result.response.status, result.error, context);
  return result.data as T;
}

/** Every page of a list whose cursor comes back in the `X-Next-Token` header. */
export async function allPages<T>(
  context: string,
  page: (nextToken: string | undefined) => Promise<FetchResult<T[]>>,
): Promise<T[]> {
  const all: T[] = [];
  let nextToken: string | undefined;
  do {
    let response: Response | undefined;
    const data = await unwrap(
      context,
      page(nextToken).then((result) => {
        response = result.response;
        return result;
      }),
    );
    all.push(...data);
    nextToken = response?.headers.get("X-Next-Token") || undefined;
  } while (nextToken);
  return all;
}
