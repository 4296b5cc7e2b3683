import { type Client, createClient, type Interceptor, type Transport } from "@connectrpc/connect";
import { createConnectTransport } from "@connectrpc/connect-web";
import type { Client as FetchClient } from "openapi-fetch";
import type { paths } from "./gen/envd.gen.js";
import { Filesystem } from "./gen/filesystem/filesystem_pb.js";
import { Process } from "./gen/process/process_pb.js";
import { createFetchClient } from "./openapi-fetch.js";

export type {
  components as EnvdComponents,
  operations as EnvdOperations,
  paths as EnvdPaths,
} from "./gen/envd.gen.js";
export * from "./gen/filesystem/filesystem_pb.js";
export * from "./gen/process/process_pb.js";

/** The port envd listens on inside every sandbox. */
export const ENVD_PORT = 49983;

export interface EnvdClientOptions {
  /** envd itself (`http://localhost:49983`), a sandbox URL, or the proxy when `sandboxId` is set. */
  baseUrl: string;
  /** The sandbox's `envdAccessToken`, sent as `X-Access-Token`. */
  accessToken?: string;
  /** Route through a shared proxy URL by header (`E2b-Sandbox-Id` / `E2b-Sandbox-Port`). */
  sandboxId?: string;
  /** Port inside the sandbox when routing by header; envd's by default. */
  port?: number;
  /** Extra headers on every call. */
  headers?: Record<string, string>;
  /**
   * Connect transport to use instead of the default fetch-based one, for example a
   * `@connectrpc/connect-node` HTTP/2 transport for client streaming (StreamInput).
   * Add `envdInterceptor(options)` to it so the routing and auth headers are sent.
   */
  transport?: Transport;
  /** fetch implementation for the default transport and the HTTP file routes. */
  fetch?: typeof globalThis.fetch;
}

export interface EnvdClient {
  filesystem: Client<typeof Filesystem>;
  process: Client<typeof Process>;
  /** envd's plain-HTTP routes: `/files`, `/files/compose`, `/health`, `/envs`, `/init`, `/metrics`. */
  http: FetchClient<paths>;
}

/** Headers every envd call carries: access token and, through a proxy, the routing pair. */
export function envdHeaders(options: EnvdClientOptions): Record<string, string> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.accessToken) headers["X-Access-Token"] = options.accessToken;
  if (options.sandboxId) {
    headers["E2b-Sandbox-Id"] = options.sandboxId;
    headers["E2b-Sandbox-Port"] = String(options.port ?? ENVD_PORT);
  }
  return headers;
}

/** A Connect interceptor that adds `envdHeaders(options)` to each request. */
export function envdInterceptor(options: EnvdClientOptions): Interceptor {
  const headers = Object.entries(envdHeaders(options));
  return (next) => (req) => {
    for (const [name, value] of headers) req.header.set(name, value);
    return next(req);
  };
}

export function createEnvdClient(options: EnvdClientOptions): EnvdClient {
  const transport =
    options.transport ??
    createConnectTransport({
      baseUrl: options.baseUrl,
      fetch: options.fetch,
      interceptors: [envdInterceptor(options)],
    });
  return {
    filesystem: createClient(Filesystem, transport),
    process: createClient(Process, transport),
    http: createFetchClient<paths>({
      baseUrl: options.baseUrl,
      headers: envdHeaders(options),
      fetch: options.fetch,
    }),
  };
}
