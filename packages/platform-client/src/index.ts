import type { Client, Middleware } from "openapi-fetch";
import type { components, paths } from "./gen/platform.gen.js";
import { createFetchClient } from "./openapi-fetch.js";

export type { components, operations, paths } from "./gen/platform.gen.js";

/** Schemas of the platform API by name, for example `Schemas["Sandbox"]`. */
export type Schemas = components["schemas"];

export interface PlatformClientOptions {
  /** Where the platform API is served, for example `http://localhost:3000`. */
  baseUrl: string;
  /** A team API key (`e2b_…`), sent as `X-API-Key`. */
  apiKey?: string;
  /** Extra headers on every call. */
  headers?: Record<string, string>;
  /** fetch implementation; the global one by default. */
  fetch?: typeof globalThis.fetch;
}

export type PlatformClient = Client<paths>;

/** Adds the team's API key to every request that does not carry one already. */
export function apiKeyMiddleware(apiKey: string): Middleware {
  return {
    onRequest({ request }) {
      if (!request.headers.has("X-API-Key")) request.headers.set("X-API-Key", apiKey);
      return request;
    },
  };
}

export function createPlatformClient(options: PlatformClientOptions): PlatformClient {
  const client = createFetchClient<paths>({
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    headers: options.headers,
    fetch: options.fetch,
  });
  if (options.apiKey) client.use(apiKeyMiddleware(options.apiKey));
  return client;
}

/** The platform's OpenAPI document itself, for servers and tools that validate against it. */
export { openapiDocument } from "./gen/openapi.gen.js";
