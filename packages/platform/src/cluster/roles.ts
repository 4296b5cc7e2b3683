/**
 * The stateless roles of a cluster, each a process of its own against the PostgreSQL catalog:
 * `x api` (routes the platform API to nodes, watches their heartbeats) and `x proxy` (routes
 * sandbox traffic to nodes). The node role is the platform itself with `cluster` set (see
 * platform.ts).
 */
import http from "node:http";
import { createAuthenticator } from "../api/authenticate.js";
import { withConsole } from "../console/console-surface.js";
import { listen } from "../lib/http.js";
import type { Logger } from "../lib/log.js";
import { PLATFORM_VERSION } from "../lib/version.js";
import { readMetricsToken } from "../observability/metrics-endpoint.js";
import { createProxyServer, ENVD_PORT } from "../proxy/index.js";
import { SecretBox } from "../secrets/secret-box.js";
import { openStore, type RowSealer, type Store } from "../store/index.js";
import { createApiRouter } from "./api-router.js";
import { createCatalogResolver } from "./catalog-resolver.js";
import { createClusterMetrics } from "./cluster-metrics.js";
import { HEARTBEAT_MS } from "./node-agent.js";
import { NodeMonitor } from "./node-monitor.js";

export interface RoleConfig {
  databaseUrl: string;
  host: string;
  port: number;
}

export interface RunningRole {
  port: number;
  close(): Promise<void>;
}

/** A node silent this long is marked down (its sandboxes lost): three missed heartbeats. */
export const DEFAULT_NODE_TIMEOUT_MS = 3 * HEARTBEAT_MS;

export function requirePostgres(databaseUrl: string | undefined, role: string): string {
  if (!databaseUrl || !/^postgres(ql)?:\/\//.test(databaseUrl)) {
    throw new Error(`x ${role} needs the cluster's PostgreSQL catalog: --database-url postgres://…`);
  }
  return databaseUrl;
}

async function catalog(config: RoleConfig, role: string, sealer?: RowSealer): Promise<Store> {
  return openStore({
    dataDir: "/nonexistent",
    databaseUrl: requirePostgres(config.databaseUrl, role),
    ...(sealer ? { sealer } : {}),
  });
}

/** `x api`: any number of them, behind one address. */
export async function startApiRole(
  config: RoleConfig & {
    nodeTimeoutMs?: number;
    /** The web console's files, and how pages reach envd through the cluster's proxy. */
    console?: { distDir: string; domain: string; proxyPort: number };
    /** A file holding the bearer token `/metrics` needs (PlatformConfig.metricsTokenFile). */
    metricsTokenFile?: string;
  },
  log: Logger,
): Promise<RunningRole> {
  const metricsToken =
    config.metricsTokenFile === undefined ? undefined : await readMetricsToken(config.metricsTokenFile);
  const store = await catalog(config, "api");
  const heartbeatTimeoutMs = config.nodeTimeoutMs ?? DEFAULT_NODE_TIMEOUT_MS;
  const monitor = new NodeMonitor({
    store,
    heartbeatTimeoutMs,
    log: log.child({ component: "node-monitor" }),
  });
  monitor.start();
  const metrics = createClusterMetrics(store);
  const router = createApiRouter({
    store,
    authenticate: createAuthenticator(store, log),
    heartbeatTimeoutMs,
    log: log.child({ component: "api-router" }),
    metrics: metrics.registry,
    metricsToken,
    observeRoute: metrics.observeRoute,
    observeRequest: metrics.observeRequest,
    surfaces: config.console
      ? withConsole(config.console.distDir, {
          version: PLATFORM_VERSION,
          domain: config.console.domain,
          envdUrl: `http://${ENVD_PORT}-{sandboxID}.${config.console.domain}:${config.console.proxyPort}`,
          cluster: true,
        })
      : [],
  });
  const server = http.createServer(router.handler);
  server.keepAliveTimeout = 65_000;
  const port = await listen(server, config.port, config.host);
  log.info({ port }, "api ready");
  return {
    port,
    async close() {
      monitor.stop();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeAllConnections();
      router.close();
      await store.close();
    },
  };
}

/** `x proxy`: any number of them, behind the sandbox domain's address. */
export async function startProxyRole(
  config: RoleConfig & {
    domain: string;
    /**
     * The nodes' secrets key: signed file URLs that name no sandbox are matched against the
     * running sandboxes' envd tokens, which are sealed with it. Without it such URLs are 400.
     */
    secretsKeyFile?: string;
  },
  log: Logger,
): Promise<RunningRole> {
  let key: SecretBox | undefined;
  if (config.secretsKeyFile) {
    try {
      key = (await SecretBox.open({ file: config.secretsKeyFile, dataDir: "/nonexistent" })).box;
    } catch (err) {
      // everything else works without it: only those URLs go unrouted
      log.warn(
        { err },
        "could not read the secrets key: signed file URLs that name no sandbox are not routed",
      );
    }
  } else
    log.info("no secrets key (--secrets-key-file): signed file URLs that name no sandbox are not routed");
  const store = await catalog(config, "proxy", key);
  const resolver = createCatalogResolver({
    store,
    databaseUrl: config.databaseUrl,
    signed: key !== undefined,
    log,
  });
  await resolver.listen();
  const proxy = createProxyServer({
    domain: config.domain,
    log: log.child({ component: "proxy" }),
    resolver,
  });
  await proxy.listen(config.port, config.host);
  log.info({ port: proxy.port }, "proxy ready");
  return {
    port: proxy.port,
    async close() {
      await proxy.close();
      await resolver.close();
      await store.close();
    },
  };
}
