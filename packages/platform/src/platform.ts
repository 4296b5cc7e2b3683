import { mkdir } from "node:fs/promises";
import http from "node:http";
import path from "node:path";
import { warmUpEnvd } from "./agent/init.js";
import { installEnvd } from "./agent/install.js";
import { createApi } from "./api/index.js";
import { NodeRole } from "./cluster/node-role.js";
import { requirePostgres } from "./cluster/roles.js";
import { type PlatformConfig, warmPoolMax } from "./config.js";
import { listen } from "./lib/http.js";
import { createLogger, type Logger } from "./lib/log.js";
import type { Team } from "./model/team.js";
import { hostResolvers, parseUpstream } from "./network/dns-forwarder.js";
import { DomainDns, reachableAddress } from "./network/domain-dns.js";
import { EgressServices } from "./network/egress.js";
import { createNetworkManager } from "./network/network-manager.js";
import { MetricsSampler } from "./observability/metrics-sampler.js";
import { createPlatformMetrics } from "./observability/platform-metrics.js";
import { BootBudget } from "./orchestrator/boot-budget.js";
import { Orchestrator } from "./orchestrator/orchestrator.js";
import { WarmPool } from "./orchestrator/warm-pool.js";
import {
  createProxyServer,
  listenHttps,
  type ProxyServer,
  proxyCertificate,
  registerProxyMetrics,
  reportedDomain,
} from "./proxy/index.js";
import type { ImageBuildProgress } from "./rootfs/base-image.js";
import { availableRuntimes, chooseDefaultRuntime } from "./runtime/available.js";
import { devNullProblem } from "./runtime/host-devices.js";
import { reserveHostTasks } from "./runtime/host-limits.js";
import { CpuFairness } from "./sandbox/cpu-fairness.js";
import { SandboxHost } from "./sandbox/sandbox-host.js";
import { openStore, type Store } from "./store/index.js";
import { ensureBaseTemplate } from "./templates/base-template.js";
import { createBuildService } from "./templates/build-service.js";
import { Volumes } from "./volumes/volumes.js";

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
  /**
   * The domain the API tells clients (`getHost(port)` is `{port}-{id}.{sandboxDomain}`): the
   * configured one, with the HTTPS port when that is not 443.
   */
  sandboxDomain: string;
  /** The proxy's HTTPS port, when it serves HTTPS. */
  tlsPort?: number;
  /** The local CA's certificate to trust for HTTPS, when the platform made its own. */
  caFile?: string;
  /** The port of the sandbox domain's DNS listener, when there is one. */
  dnsListenPort?: number;
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

export interface PlatformHooks {
  /** The root logger; a new one (pretty on a terminal, JSON otherwise) when unset. */
  log?: Logger;
  /** Progress of the base image build (minutes, on first start); logged by phase when unset. */
  onBaseImageProgress?(p: ImageBuildProgress): void;
}

/**
 * Starts store, orchestrator, API and proxy in this process: the embedded platform. This
 * function only wires the parts together and orders their start and stop.
 */
export async function startPlatform(config: PlatformConfig, hooks: PlatformHooks = {}): Promise<Platform> {
  const root = hooks.log ?? createLogger();
  const log = root.child({ component: "platform" });
  await mkdir(config.dataDir, { recursive: true });
  // settings that can be refused are read before anything starts
  const dnsListen =
    config.dnsListen === undefined ? undefined : parseUpstream(config.dnsListen, { listen: true });
  const tlsIdentity =
    config.tlsPort === undefined
      ? undefined
      : await proxyCertificate({
          dir: path.join(config.dataDir, "tls"),
          domain: config.domain,
          certFile: config.tlsCertFile,
          keyFile: config.tlsKeyFile,
        });
  if (config.cluster) requirePostgres(config.databaseUrl, "node");
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    nodeId: config.cluster?.nodeId,
  });
  // beyond one machine: layers come from and go to other nodes, bootstrap is shared
  const node =
    config.cluster &&
    new NodeRole({
      config: config.cluster,
      store,
      dataDir: config.dataDir,
      memoryReserveMB: config.memoryReserveMB,
      log: root.child({ component: "cluster" }),
    });
  const runtimes = await availableRuntimes(config.dataDir);
  const defaultRuntime = chooseDefaultRuntime(runtimes, config.defaultRuntime);
  await reserveHostTasks(log);
  const devNull = devNullProblem();
  if (devNull)
    log.warn({ problem: devNull }, "the host's /dev/null is not as it should be; sandboxes may be why");

  const network = createNetworkManager({
    prefix: config.networkPrefix,
    cidr: config.networkCidr,
    allowInternal: config.allowInternal,
  });
  const egress = new EgressServices({
    network,
    upstreams: config.dnsUpstreams ? config.dnsUpstreams.map((u) => parseUpstream(u)) : await hostResolvers(),
    log: root,
  });
  network.onRemoved = (id) => egress.forget(id);
  const egressPorts = await egress.start();
  const envdDir = await installEnvd(config.envdDir, config.dataDir);
  const volumes = new Volumes({
    store,
    dataDir: config.dataDir,
    defaultSizeMB: config.volumeSizeMB,
    log: root.child({ component: "volumes" }),
  });
  const host = new SandboxHost({
    dataDir: config.dataDir,
    runtimes,
    network,
    envdDir,
    processLimit: config.processLimit,
    volumeSource: (id) => volumes.source(id),
    ...(node ? { ensureLayers: node.ensureLayers } : {}),
    log: root.child({ component: "sandbox" }),
  });
  let proxy: ProxyServer | undefined;
  const budget = new BootBudget({
    concurrent: config.bootConcurrency,
    memoryReserveBytes: config.memoryReserveMB === undefined ? undefined : config.memoryReserveMB * 2 ** 20,
  });
  const metrics = createPlatformMetrics({
    store,
    pool: () => warmPool.stats(),
    egress: () => egress.log.counts(),
  });
  const warmPool = new WarmPool({
    min: config.warmPoolSize,
    max: warmPoolMax(config),
    host,
    budget,
    onBoot: metrics.observeBoot,
    warmUp: (member, spec) =>
      warmUpEnvd({ address: member.address, accessToken: member.accessToken }, spec.defaultUser),
    // per network prefix: platforms sharing a data dir never touch each other's members
    recordDir: path.join(config.dataDir, "pool", config.networkPrefix),
    log: root.child({ component: "warm-pool" }),
  });
  const orchestrator = new Orchestrator({
    store,
    host,
    pool: warmPool,
    budget,
    dataDir: config.dataDir,
    defaultRuntime,
    deepPauseAfterMs: config.deepPauseAfterMs,
    maxLivePerTeam: config.maxSandboxesPerTeam,
    log: root.child({ component: "orchestrator" }),
    onUnavailable: (id) => proxy?.closeSandboxConnections(id),
  });
  await orchestrator.adopt();
  orchestrator.watchHealth();
  const cpuFairness = new CpuFairness({
    ids: () => orchestrator.servingIds(),
    log: root.child({ component: "cpu-fairness" }),
  });
  if (config.cpuFairness !== false) cpuFairness.start();
  await warmPool.discardLeftovers();
  await host.sweepOrphans(orchestrator.knownIds());
  // Leftovers first (the sweep drops the firewall table when nothing is kept), then the
  // firewall for the sandboxes to come.
  await network.sweep(orchestrator.knownIds());
  await network.init(egressPorts).catch(async (err: unknown) => {
    await egress.close();
    throw err;
  });
  egress.watchFirewall();

  const makeShared = async () => {
    const base = await ensureBaseTemplate({
      store,
      dataDir: config.dataDir,
      envdVersion: ENVD_VERSION,
      diskSizeMB: config.diskSizeMB,
      onProgress: hooks.onBaseImageProgress,
      log,
    });
    return { base, firstApiKey: await store.teams.ensureFirstTeam() };
  };
  await node?.sweepFetches();
  const { base, firstApiKey } = node ? await node.bootstrap(makeShared) : await makeShared();
  await node?.layers.publish(base.build.layers);
  if (warmPool.enabled) orchestrator.keepWarm(base.template, base.build);

  const builds = await createBuildService({
    store,
    host,
    runtime: defaultRuntime,
    dataDir: config.dataDir,
    owner: config.networkPrefix,
    ...(node ? { onLayer: node.onLayer } : {}),
    registryMirrors: config.registryMirrors,
    insecureRegistries: config.insecureRegistries,
    log: root.child({ component: "builder" }),
  });

  const sampler = new MetricsSampler({
    store,
    paths: (id) => host.paths(id),
    log: root.child({ component: "metrics" }),
  });
  sampler.start();
  registerProxyMetrics(metrics.registry, () => proxy?.metrics);
  proxy = createProxyServer({
    domain: config.domain,
    log: root.child({ component: "proxy" }),
    resolver: {
      resolve: (id) => orchestrator.route(id),
      resume: (id) => orchestrator.resumeOnTraffic(id),
      checkHealth: (id) => orchestrator.checkHealth(id),
      resolveSigned: async (matches) => orchestrator.signedBy(matches),
    },
  });
  await proxy.listen(config.proxyPort, config.host);
  const https =
    tlsIdentity &&
    (await listenHttps(proxy, { port: config.tlsPort!, host: config.host, identity: tlsIdentity }));
  const publicDomain = reportedDomain(config.domain, https);
  const domainDns =
    dnsListen &&
    new DomainDns({
      domain: config.domain,
      address: reachableAddress(config.host), // the proxy's, as clients reach it
      log: root.child({ component: "domain-dns" }),
    });
  const dnsListenPort = domainDns && (await domainDns.listen(dnsListen!.port, dnsListen!.host));
  const apiLog = root.child({ component: "api" });
  const apiHandler = createApi({
    store,
    orchestrator,
    builds,
    volumes,
    sampler,
    log: apiLog,
    domain: publicDomain,
    envdVersion: ENVD_VERSION,
    platformVersion: PLATFORM_VERSION,
    maxSandboxesPerTeam: config.maxSandboxesPerTeam,
    maxTimeoutSeconds: config.maxTimeoutSeconds,
    diskSizeMB: config.diskSizeMB,
    availableRuntimes: [...runtimes.keys()],
    consoleLog: (id) => host.paths(id).consoleLog,
    networkDecisions: (id, after, limit) => egress.log.since(id, after, limit),
    dropWarmPools: (templateId) => warmPool.discardTemplate(templateId),
    observeRequest: metrics.observeApiRequest,
    observeCreate: metrics.observeSandboxCreate,
    metrics: metrics.registry,
    surfaces: node ? [node.surface()] : [],
  });
  const api = http.createServer(apiHandler);
  api.keepAliveTimeout = 65_000;
  const apiPort = await listen(api, config.apiPort, config.host);
  if (node) {
    await node.join(
      { api: apiPort, traffic: proxy.port },
      {
        runtimes: [...runtimes.keys()],
        sandboxes: () => [...orchestrator.servingIds()].length,
        pool: () => {
          const ready: Record<string, number> = {};
          for (const p of warmPool.stats()) ready[p.buildId] = (ready[p.buildId] ?? 0) + p.ready;
          return ready;
        },
        reconcile: async () => {
          await orchestrator.adopt();
          await host.sweepOrphans(orchestrator.knownIds());
        },
      },
    );
  }
  log.info(
    {
      apiPort,
      proxyPort: proxy.port,
      runtimes: [...runtimes.keys()],
      defaultRuntime,
      node: config.cluster?.nodeId,
    },
    "platform ready",
  );

  return {
    config,
    store,
    orchestrator,
    warmPool,
    apiPort,
    proxyPort: proxy.port,
    sandboxDomain: publicDomain,
    ...(https ? { tlsPort: https.port } : {}),
    ...(tlsIdentity?.caFile ? { caFile: tlsIdentity.caFile } : {}),
    ...(dnsListenPort !== undefined ? { dnsListenPort } : {}),
    firstApiKey,
    defaultTeam: () => store.teams.defaultTeam(),
    close: async (opts = {}) => {
      await node?.leave();
      await Promise.all([
        new Promise<void>((resolve) => api.close(() => resolve())),
        proxy?.close(),
        https?.close(),
      ]);
      api.closeAllConnections();
      await sampler.stop();
      await builds.builder.close();
      // members are nobody's sandboxes: they never outlive the process that booted them
      await warmPool.close();
      if (opts.destroy) await orchestrator.killAll();
      await volumes.close();
      // nothing for the next start to adopt: the firewall table (and any leftover) goes too
      if (opts.destroy || !(await orchestrator.anyLeft())) await network.sweep();
      cpuFairness.stop();
      orchestrator.detach();
      domainDns?.close();
      await egress.close();
      await store.close();
    },
  };
}
