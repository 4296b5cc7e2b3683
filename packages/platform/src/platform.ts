import { mkdir } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { openapiDocument } from "@x/platform-client";
import { createAuthenticator } from "./api/authenticate.js";
import { OpenApiRouter } from "./api/openapi.js";
import { keyRoutes } from "./api/routes/keys.js";
import { sandboxLogsRoutes } from "./api/routes/sandbox-logs.js";
import { sandboxMetricsRoutes } from "./api/routes/sandbox-metrics.js";
import { sandboxRoutes } from "./api/routes/sandboxes.js";
import { snapshotRoutes } from "./api/routes/snapshots.js";
import { templateRoutes } from "./api/routes/templates.js";
import { createApiHandler, type Handler } from "./api/server.js";
import type { PlatformConfig } from "./config.js";
import { createLogger } from "./log.js";
import { DnsForwarder, hostResolvers, parseUpstream } from "./network/dns-forwarder.js";
import { createNetworkManager } from "./network/network-manager.js";
import { withMetricsEndpoint } from "./observability/metrics-endpoint.js";
import { createPlatformMetrics } from "./observability/platform-metrics.js";
import { installEnvd } from "./orchestrator/envd-install.js";
import { MetricsSampler } from "./orchestrator/metrics.js";
import { Orchestrator } from "./orchestrator/orchestrator.js";
import { SandboxHost } from "./orchestrator/sandbox-host.js";
import { WarmPool } from "./orchestrator/warm-pool.js";
import { createProxyServer, type ProxyServer } from "./proxy/index.js";
import type { ContainerRuntime, RuntimeName } from "./runtime/container-runtime.js";
import { createRuntime } from "./runtime/create-runtime.js";
import { openStore, type Store, type Team } from "./store/index.js";
import { defaultTeam, userTeams } from "./teams.js";
import { ensureBaseTemplate } from "./templates/base-template.js";
import { createBuildService } from "./templates/build-service.js";

/** envd version every sandbox reports; the public client needs at least 0.6.4 for all features. */
export const ENVD_VERSION = "0.6.4";
export const PLATFORM_VERSION = "0.1.0";

export interface Platform {
  config: PlatformConfig;
  store: Store;
  orchestrator: Orchestrator;
  /** Ready sandboxes handed out by create (empty when `warmPoolSize` is 0). */
  warmPool: WarmPool;
  apiPort: number;
  proxyPort: number;
  /** Set on the first start only: the first team's API key, shown once. */
  firstApiKey?: string;
  /** The first team created on first start (for the CLI's demo and key commands). */
  defaultTeam(): Promise<Team>;
  /**
   * Stops serving. Sandboxes keep running for the next start to adopt, unless `destroy`
   * is set: then every sandbox is killed and the platform's network rules are removed. The
   * network rules also go when no sandbox is left to adopt.
   */
  close(opts?: { destroy?: boolean }): Promise<void>;
}

async function availableRuntimes(dataDir: string): Promise<Map<RuntimeName, ContainerRuntime>> {
  const runtimes = new Map<RuntimeName, ContainerRuntime>();
  const problems: string[] = [];
  for (const name of ["runsc", "runc"] as const) {
    try {
      runtimes.set(name, await createRuntime(name, { stateDir: path.join(dataDir, "runtime", name) }));
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (runtimes.size === 0) {
    throw new Error(`no sandbox runtime found: ${problems.join("; ")} (apt-get install runsc runc)`);
  }
  return runtimes;
}

function listen(server: http.Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : port);
    });
  });
}

/** Starts store, orchestrator, API and proxy in this process: the embedded platform. */
export async function startPlatform(config: PlatformConfig): Promise<Platform> {
  const log = createLogger("platform");
  await mkdir(config.dataDir, { recursive: true });
  const store = await openStore({ dataDir: config.dataDir, databaseUrl: config.databaseUrl });
  const runtimes = await availableRuntimes(config.dataDir);
  const defaultRuntime = config.defaultRuntime ?? (runtimes.has("runsc") ? "runsc" : "runc");
  if (!runtimes.has(defaultRuntime)) throw new Error(`default runtime ${defaultRuntime} is not installed`);

  const network = createNetworkManager({
    prefix: config.networkPrefix,
    cidr: config.networkCidr,
    allowInternal: config.allowInternal,
  });
  const dns = new DnsForwarder({
    upstreams: config.dnsUpstreams ? config.dnsUpstreams.map(parseUpstream) : await hostResolvers(),
    log: createLogger("dns"),
  });
  const dnsPort = await dns.listen();
  const envdDir = await installEnvd(config.envdDir, config.dataDir);
  const host = new SandboxHost({ dataDir: config.dataDir, runtimes, network, envdDir, log });
  let proxy: ProxyServer | undefined;
  const warmPool = new WarmPool({
    size: config.warmPoolSize,
    host,
    // per network prefix: platforms sharing a data dir never touch each other's members
    recordDir: path.join(config.dataDir, "pool", config.networkPrefix),
    log,
  });
  const orchestrator = new Orchestrator({
    store,
    host,
    pool: warmPool,
    dataDir: config.dataDir,
    defaultRuntime,
    deepPauseAfterMs: config.deepPauseAfterMs,
    log,
    onUnavailable: (id) => proxy?.closeSandboxConnections(id),
  });
  await orchestrator.adopt();
  await warmPool.discardLeftovers();
  // Leftovers first (the sweep drops the firewall table when nothing is kept), then the
  // firewall for the sandboxes to come.
  await network.sweep(orchestrator.knownIds());
  await network.init({ dnsPort });

  const baseTemplateId = await ensureBaseTemplate({
    store,
    dataDir: config.dataDir,
    envdVersion: ENVD_VERSION,
    diskSizeMB: config.diskSizeMB,
    onProgress: (p) => log("info", "building the base template", { phase: p.phase, line: p.line }),
  });

  if (warmPool.enabled) {
    const build = await store.templates.buildForTag(baseTemplateId);
    if (build) orchestrator.keepWarm(baseTemplateId, build);
  }

  const builds = await createBuildService({
    store,
    host,
    runtime: defaultRuntime,
    dataDir: config.dataDir,
    log,
  });

  let firstApiKey: string | undefined;
  if ((await userTeams(store)).length === 0) {
    const team = await store.teams.createTeam("Default team", "default");
    firstApiKey = (await store.teams.createKey(team.id, "first key")).key;
  }

  const sampler = new MetricsSampler({ store, paths: (id) => host.paths(id), log });
  sampler.start();
  const metrics = createPlatformMetrics({ store, proxy: () => proxy?.metrics });

  const router = new OpenApiRouter(openapiDocument);
  const handlers: Record<string, Handler> = {
    getHealth: async () => ({ status: 200, body: { status: "ok", version: PLATFORM_VERSION } }),
    ...keyRoutes(store),
    ...sandboxRoutes({
      store,
      orchestrator,
      domain: config.domain,
      envdVersion: ENVD_VERSION,
      maxSandboxesPerTeam: config.maxSandboxesPerTeam,
      maxTimeoutSeconds: config.maxTimeoutSeconds,
      availableRuntimes: [...runtimes.keys()],
      observeCreate: metrics.observeSandboxCreate,
    }),
    ...sandboxMetricsRoutes({ store, sampler }),
    ...sandboxLogsRoutes({ store, consoleLog: (id) => host.paths(id).consoleLog }),
    ...templateRoutes({
      ...builds,
      store,
      envdVersion: ENVD_VERSION,
      diskSizeMB: config.diskSizeMB,
      beforeDelete: (templateId) => warmPool.discardTemplate(templateId),
    }),
    ...snapshotRoutes({
      store,
      orchestrator,
      layers: builds.layers,
      domain: config.domain,
      envdVersion: ENVD_VERSION,
      maxSandboxesPerTeam: config.maxSandboxesPerTeam,
      maxTimeoutSeconds: config.maxTimeoutSeconds,
    }),
  };
  const api = http.createServer(
    withMetricsEndpoint(
      metrics.registry,
      createApiHandler({
        router,
        handlers,
        authenticate: createAuthenticator(store, log),
        log,
        observe: metrics.observeApiRequest,
      }),
      (err) => log("error", "metrics collection failed", { err: String(err) }),
    ),
  );
  api.keepAliveTimeout = 65_000;
  const apiPort = await listen(api, config.apiPort, config.host);
  proxy = createProxyServer({
    domain: config.domain,
    log: createLogger("proxy"),
    resolver: {
      resolve: (id) => orchestrator.route(id),
      resume: (id) => orchestrator.resumeOnTraffic(id),
      // a signed /files URL names no sandbox: the one whose envd token signed it is meant
      resolveSigned: async (matches) =>
        (await store.sandboxes.live()).find(
          (row) => row.state === "running" && matches(row.envd_access_token),
        )?.id,
    },
  });
  await proxy.listen(config.proxyPort, config.host);
  log("info", "platform ready", {
    apiPort,
    proxyPort: proxy.port,
    runtimes: [...runtimes.keys()],
    defaultRuntime,
  });

  return {
    config,
    store,
    orchestrator,
    warmPool,
    apiPort,
    proxyPort: proxy.port,
    firstApiKey,
    defaultTeam: () => defaultTeam(store),
    close: async (opts = {}) => {
      await Promise.all([new Promise<void>((resolve) => api.close(() => resolve())), proxy?.close()]);
      api.closeAllConnections();
      await sampler.stop();
      await builds.builder.close();
      // members are nobody's sandboxes: they never outlive the process that booted them
      await warmPool.close();
      if (opts.destroy) {
        for (const row of await store.sandboxes.live()) {
          await orchestrator
            .kill(row.id)
            .catch((err) => log("warn", "kill on close failed", { id: row.id, err: String(err) }));
        }
        await network.sweep();
      } else if ((await store.sandboxes.live()).length === 0) {
        // nothing for the next start to adopt: the firewall table (and any leftover) goes too
        await network.sweep();
      }
      orchestrator.detach();
      await dns.close();
      await store.close();
    },
  };
}
