import { mkdir } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { openapiDocument } from "@x/platform-client";
import { createApiHandler, type Handler } from "./api/server.js";
import { OpenApiRouter } from "./api/openapi.js";
import { keyRoutes } from "./api/routes/keys.js";
import { sandboxRoutes } from "./api/routes/sandboxes.js";
import { type PlatformConfig } from "./config.js";
import { createLogger } from "./log.js";
import { createNetworkManager } from "./network/network-manager.js";
import { createProxyServer, type ProxyServer } from "./proxy/index.js";
import { Orchestrator } from "./orchestrator/orchestrator.js";
import { SandboxHost } from "./orchestrator/sandbox-host.js";
import type { ContainerRuntime, RuntimeName } from "./runtime/container-runtime.js";
import { createRuntime } from "./runtime/create-runtime.js";
import { openStore, type Store, type Team } from "./store/index.js";
import { ensureBaseTemplate, SYSTEM_NAMESPACE } from "./templates/base-template.js";

/** envd version every sandbox reports; the public client needs at least 0.6.4 for all features. */
export const ENVD_VERSION = "0.6.4";
export const PLATFORM_VERSION = "0.1.0";

export interface Platform {
  config: PlatformConfig;
  store: Store;
  orchestrator: Orchestrator;
  apiPort: number;
  proxyPort: number;
  /** Set on the first start only: the first team's API key, shown once. */
  firstApiKey?: string;
  /** The first team created on first start (for the CLI's demo and key commands). */
  defaultTeam(): Promise<Team>;
  /**
   * Stops serving. Sandboxes keep running for the next start to adopt, unless `destroy`
   * is set: then every sandbox is killed and the platform's network rules are removed.
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

  const network = createNetworkManager({ prefix: config.networkPrefix, cidr: config.networkCidr });
  const host = new SandboxHost({ dataDir: config.dataDir, runtimes, network, envdDir: config.envdDir, log });
  let proxy: ProxyServer | undefined;
  const orchestrator = new Orchestrator({
    store,
    host,
    dataDir: config.dataDir,
    defaultRuntime,
    deepPauseAfterMs: config.deepPauseAfterMs,
    log,
    onUnavailable: (id) => proxy?.closeSandboxConnections(id),
  });
  await orchestrator.adopt();
  // Leftovers first (the sweep drops the firewall table when nothing is kept), then the
  // firewall for the sandboxes to come.
  await network.sweep(orchestrator.knownIds());
  await network.init();

  await ensureBaseTemplate({
    store,
    dataDir: config.dataDir,
    envdVersion: ENVD_VERSION,
    diskSizeMB: config.diskSizeMB,
    onProgress: (p) => log("info", "building the base template", { phase: p.phase, line: p.line }),
  });

  let firstApiKey: string | undefined;
  const userTeams = async () => (await store.teams.listTeams()).filter((t) => t.namespace !== SYSTEM_NAMESPACE);
  if ((await userTeams()).length === 0) {
    const team = await store.teams.createTeam("Default team", "default");
    firstApiKey = (await store.teams.createKey(team.id, "first key")).key;
  }

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
    }),
  };
  const api = http.createServer(
    createApiHandler({
      router,
      handlers,
      authenticate: async (key) => (await store.teams.teamForKey(key))?.team,
      log,
    }),
  );
  api.keepAliveTimeout = 65_000;
  const apiPort = await listen(api, config.apiPort, config.host);
  proxy = createProxyServer({
    domain: config.domain,
    log: createLogger("proxy"),
    resolver: {
      resolve: (id) => orchestrator.route(id),
      resume: (id) => orchestrator.resumeOnTraffic(id),
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
    apiPort,
    proxyPort: proxy.port,
    firstApiKey,
    defaultTeam: async () => {
      const [team] = await userTeams();
      if (!team) throw new Error("no team: start the platform once to create the first one");
      return team;
    },
    close: async (opts = {}) => {
      await Promise.all([new Promise<void>((resolve) => api.close(() => resolve())), proxy?.close()]);
      api.closeAllConnections();
      if (opts.destroy) {
        for (const row of await store.sandboxes.live()) {
          await orchestrator.kill(row.id).catch((err) => log("warn", "kill on close failed", { id: row.id, err: String(err) }));
        }
        await network.sweep();
      }
      orchestrator.detach();
      await store.close();
    },
  };
}
