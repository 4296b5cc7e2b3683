import { mkdir } from "node:fs/promises";
import path from "node:path";
import { warmUpEnvd } from "./agent/init.js";
import { installEnvd } from "./agent/install.js";
import { createApi } from "./api/index.js";
import { childRecords, claimRunDir, poolRecordDir, runDirOf } from "./cleanup.js";
import { NodeRole } from "./cluster/node-role.js";
import { requirePostgres } from "./cluster/roles.js";
import { type PlatformConfig, warmPoolMax } from "./config.js";
import { bindFrontPorts } from "./front-ports.js";
import { crashPoint } from "./lib/crash-point.js";
import { Guardian } from "./lib/guardian.js";
import { createLogger, type Logger } from "./lib/log.js";
import { Teardown } from "./lib/teardown.js";
import type { Team } from "./model/team.js";
import { hostResolvers, parseUpstream } from "./network/dns-forwarder.js";
import { EgressServices } from "./network/egress.js";
import { createNetworkManager } from "./network/network-manager.js";
import { MetricsSampler } from "./observability/metrics-sampler.js";
import { createPlatformMetrics } from "./observability/platform-metrics.js";
import { BootBudget } from "./orchestrator/boot-budget.js";
import { Orchestrator } from "./orchestrator/orchestrator.js";
import { WarmPool } from "./orchestrator/warm-pool.js";
import { proxyCertificate, registerProxyMetrics } from "./proxy/index.js";
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
  /**
   * Stops a start under way (SIGTERM while starting): what it had set up is taken down, in
   * reverse, and the start rejects with the signal's reason.
   */
  signal?: AbortSignal;
  /**
   * The command that removes what this platform leaves if its process dies without stopping
   * (`x cleanup` for its data directory and prefix): started by a watcher process the moment
   * it dies, so warm-pool members and helpers never outlive it (see cleanup.ts). Without it,
   * the next start removes them.
   */
  cleanupCommand?: { argv: readonly string[]; env?: NodeJS.ProcessEnv };
}

/**
 * Starts store, orchestrator, API and proxy in this process: the embedded platform. This
 * function only wires the parts together and orders their start and stop: each part started
 * puts its stop on a teardown, which a stop runs in reverse and a failed start runs as far as
 * it got, so a start that fails leaves nothing behind.
 */
export async function startPlatform(config: PlatformConfig, hooks: PlatformHooks = {}): Promise<Platform> {
  const root = hooks.log ?? createLogger();
  const log = root.child({ component: "platform" });
  const teardown = new Teardown(log);
  const stopping = { destroy: false };
  try {
    return await wire(config, hooks, root, teardown, stopping);
  } catch (err) {
    await teardown.unwind();
    throw err;
  }
}

async function wire(
  config: PlatformConfig,
  hooks: PlatformHooks,
  root: Logger,
  teardown: Teardown,
  stopping: { destroy: boolean },
): Promise<Platform> {
  const log = root.child({ component: "platform" });
  // a stop asked for (SIGTERM) is seen at the next of these; the turn lets its handler run first
  const aborted = async () => {
    await new Promise((resolve) => setImmediate(resolve));
    hooks.signal?.throwIfAborted();
  };
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
  teardown.defer("run directory", await claimRunDir(config, log));
  if (hooks.cleanupCommand) {
    const guardian = Guardian.start({
      ...hooks.cleanupCommand,
      logFile: path.join(runDirOf(config), "cleanup.log"),
    });
    teardown.defer("guardian", () => guardian.release());
  }
  // ports first: one that is taken fails the start before anything is booted
  const front = await bindFrontPorts({ config, tlsIdentity, dnsListen, log: root });
  teardown.defer("listeners", () => front.close());
  await aborted();
  const store = await openStore({
    dataDir: config.dataDir,
    databaseUrl: config.databaseUrl,
    nodeId: config.cluster?.nodeId,
  });
  teardown.defer("store", () => store.close());
  const children = childRecords(config, root);
  await children.endLeftovers();
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
    children,
    log: root,
  });
  network.onRemoved = (id) => egress.forget(id);
  const egressPorts = await egress.start();
  teardown.defer("egress services", () => egress.close());
  // nothing for the next start to adopt: the firewall table (and any leftover) goes too
  teardown.defer("network", async () => {
    if (stopping.destroy || (await store.sandboxes.live()).length === 0) await network.sweep();
  });
  const envdDir = await installEnvd(config.envdDir, config.dataDir);
  const volumes = new Volumes({
    store,
    dataDir: config.dataDir,
    defaultSizeMB: config.volumeSizeMB,
    log: root.child({ component: "volumes" }),
  });
  teardown.defer("volumes", () => volumes.close());
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
    recordDir: poolRecordDir(config),
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
    onUnavailable: (id) => front.proxy.closeSandboxConnections(id),
  });
  teardown.defer("orchestrator", () => orchestrator.detach());
  teardown.defer("sandboxes", () => stopping.destroy && orchestrator.killAll());
  // members are nobody's sandboxes: they never outlive the process that booted them
  teardown.defer("warm pool", () => warmPool.close());
  await node?.markRestarting();
  await orchestrator.adopt({ serving: !node });
  orchestrator.watchHealth();
  const cpuFairness = new CpuFairness({
    ids: () => orchestrator.servingIds(),
    log: root.child({ component: "cpu-fairness" }),
  });
  if (config.cpuFairness !== false) cpuFairness.start();
  teardown.defer("cpu fairness", () => cpuFairness.stop());
  await warmPool.discardLeftovers();
  await host.sweepOrphans(orchestrator.knownIds());
  // Leftovers first (the sweep drops the firewall table when nothing is kept), then the
  // firewall for the sandboxes to come.
  await network.sweep(orchestrator.knownIds());
  await network.init(egressPorts);
  egress.watchFirewall();
  crashPoint("start:firewall-made");
  await aborted();
  await aborted();

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
  await aborted();
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
  teardown.defer("builder", () => builds.builder.close());
  const sampler = new MetricsSampler({
    store,
    paths: (id) => host.paths(id),
    log: root.child({ component: "metrics" }),
  });
  sampler.start();
  teardown.defer("metrics sampler", () => sampler.stop());
  registerProxyMetrics(metrics.registry, () => front.proxy.metrics);
  const apiLog = root.child({ component: "api" });
  const apiHandler = createApi({
    store,
    orchestrator,
    builds,
    volumes,
    sampler,
    log: apiLog,
    domain: front.publicDomain,
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
  front.serve(apiHandler, {
    resolve: (id) => orchestrator.route(id),
    resume: (id) => orchestrator.resumeOnTraffic(id),
    checkHealth: (id) => orchestrator.checkHealth(id),
    resolveSigned: async (matches) => orchestrator.signedBy(matches),
  });
  // a stop first stops taking requests
  teardown.defer("listeners", () => front.close());
  if (node) {
    await aborted();
    await node.join(
      { api: front.apiPort, traffic: front.proxy.port },
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
    teardown.defer("cluster membership", () => node.leave());
    // it answers now: its sandboxes are theirs again in the catalog
    await orchestrator.nowServing();
  }
  log.info(
    {
      apiPort: front.apiPort,
      proxyPort: front.proxy.port,
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
    apiPort: front.apiPort,
    proxyPort: front.proxy.port,
    sandboxDomain: front.publicDomain,
    ...(front.https ? { tlsPort: front.https.port } : {}),
    ...(tlsIdentity?.caFile ? { caFile: tlsIdentity.caFile } : {}),
    ...(front.dnsListenPort !== undefined ? { dnsListenPort: front.dnsListenPort } : {}),
    firstApiKey,
    defaultTeam: () => store.teams.defaultTeam(),
    close: async (opts = {}) => {
      stopping.destroy = opts.destroy === true;
      await teardown.unwind();
    },
  };
}
