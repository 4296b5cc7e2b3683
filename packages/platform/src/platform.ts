import { chmod, mkdir } from "node:fs/promises";
import path from "node:path";
import { createApi } from "./api/index.js";
import { childRecords, claimRunDir, runDirOf } from "./cleanup.js";
import { NodeRole } from "./cluster/node-role.js";
import { requirePostgres } from "./cluster/roles.js";
import type { PlatformConfig } from "./config.js";
import { withConsole } from "./console/console-surface.js";
import { bindFrontPorts } from "./front-ports.js";
import { IdentityKey } from "./identity/identity-key.js";
import { IdentityTokens } from "./identity/identity-tokens.js";
import { crashPoint } from "./lib/crash-point.js";
import { Guardian } from "./lib/guardian.js";
import { createLogger, type Logger } from "./lib/log.js";
import { Teardown } from "./lib/teardown.js";
import { PLATFORM_VERSION } from "./lib/version.js";
import type { PlaceholderValues } from "./model/placeholders.js";
import type { Team } from "./model/team.js";
import { checkEgressProxy } from "./network/byop.js";
import { DestinationGuard, destinationRules } from "./network/destination-guard.js";
import { parseUpstream } from "./network/dns-forwarder.js";
import { readMetricsToken } from "./observability/metrics-endpoint.js";
import { MetricsSampler } from "./observability/metrics-sampler.js";
import type { Orchestrator } from "./orchestrator/orchestrator.js";
import type { WarmPool } from "./orchestrator/warm-pool.js";
import { hostSize, platformLimits } from "./platform-limits.js";
import { ENVD_PORT, proxyCertificate, registerProxyMetrics } from "./proxy/index.js";
import type { ImageBuildProgress } from "./rootfs/base-image.js";
import { diskFreeSpaceMB } from "./rootfs/disk.js";
import { startSandboxSide } from "./sandbox-side.js";
import { keyBesideDatabase, SecretBox } from "./secrets/secret-box.js";
import { Secrets } from "./secrets/secrets.js";
import { openStore, type Store } from "./store/index.js";
import { ensureBaseTemplate } from "./templates/base-template.js";
import { buildLogLimits } from "./templates/build-log.js";
import { createBuildService } from "./templates/build-service.js";
import { WebhookDispatcher } from "./webhooks/dispatcher.js";

/** envd version every sandbox reports; the public client needs at least 0.6.4 for all features. */
export const ENVD_VERSION = "0.6.4";
export { PLATFORM_VERSION } from "./lib/version.js";

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
  /** Teams' secrets, sealed at rest with the platform's key. */
  secrets: Secrets;
  /**
   * Where the egress proxy gets the values of header placeholders at request time: a team's
   * secret (its current version) and a sandbox's identity tokens.
   */
  placeholders: PlaceholderValues;
  /** Sandboxes' workload identity tokens (JWT-SVIDs) and the key set that verifies them. */
  identityTokens: IdentityTokens;
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
  /**
   * Where the egress proxy gets the values of placeholders in header transforms
   * (`${e2b.secrets.NAME}`, `${e2b.identity.tokens.NAME}`): the platform's own secrets and
   * identity tokens unless given (tests).
   */
  placeholders?: PlaceholderValues;
  /**
   * Every address (A and AAAA) of a host a tenant named for the platform to connect to (a
   * registry, a webhook's URL): the host's resolver unless given (tests, which keep their
   * traffic off this host's resolvers).
   */
  resolveHost?(name: string): Promise<string[]>;
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
  // A stop asked for (SIGTERM) is seen at the next of these. Two turns of the event loop: a
  // signal's handler runs in the poll phase, which the first turn may come before.
  const aborted = async () => {
    for (let turn = 0; turn < 2; turn++) await new Promise((resolve) => setImmediate(resolve));
    hooks.signal?.throwIfAborted();
  };
  // the data dir holds every tenant's files, the database and the keys: the host's root only
  await mkdir(config.dataDir, { recursive: true, mode: 0o700 });
  await chmod(config.dataDir, 0o700);
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
  const metricsToken =
    config.metricsTokenFile === undefined ? undefined : await readMetricsToken(config.metricsTokenFile);
  const secretsKey = await SecretBox.open({ file: config.secretsKeyFile, dataDir: config.dataDir });
  if (secretsKey.created)
    log.info({ file: secretsKey.file }, "made a secrets key; a cluster's nodes must all be given this file");
  if (keyBesideDatabase(secretsKey.file, config))
    log.warn(
      { file: secretsKey.file, dataDir: config.dataDir },
      "the secrets key is inside the data directory, next to the database: one copy of it (a backup) holds both; keep the key elsewhere (--secrets-key-file)",
    );
  const identityKey = await IdentityKey.open({ file: config.identityKeyFile, dataDir: config.dataDir });
  if (identityKey.created)
    log.info(
      { file: identityKey.file },
      "made an identity-token signing key; a cluster's nodes must all be given this file",
    );
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
    sealer: secretsKey.box,
    nodeId: config.cluster?.nodeId,
  });
  teardown.defer("store", () => store.close());
  const secrets = new Secrets(store, secretsKey.box, root.child({ component: "secrets" }));
  await secrets.checkKey();
  const identityTokens = new IdentityTokens({
    store,
    key: identityKey.key,
    issuer: config.identityIssuer ?? apiUrlOf(config.host, front.apiPort),
    trustDomain: config.identityTrustDomain ?? config.domain,
  });
  // what the egress proxy puts into header transforms: the team's secrets, the sandbox's tokens
  const placeholders: PlaceholderValues = hooks.placeholders ?? {
    secret: (teamId, name) => secrets.value(teamId, name),
    identityToken: (sandboxId, name) => identityTokens.identityToken(sandboxId, name),
  };
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
  // every team's limits, finite: the operator's, else measured against this host
  const limits = platformLimits(config, await hostSize(config.dataDir));
  const { runtimes, defaultRuntime, egress, volumes, host, metrics, warmPool, orchestrator } =
    await startSandboxSide({
      config,
      limits,
      store,
      node,
      children,
      front,
      teardown,
      stopping,
      placeholders,
      log: root,
    });
  crashPoint("start:firewall-made");
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
    allowPrivateRegistries: config.allowPrivateRegistries,
    credentialMirrors: config.credentialMirrors,
    ...(hooks.resolveHost ? { resolveHost: hooks.resolveHost } : {}),
    buildLogLimits: buildLogLimits(config),
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
  // sandboxes' lifecycle events to the teams' webhooks, from the events the store records
  const webhookGuard = new DestinationGuard({
    allow: destinationRules(config.allowPrivateWebhooks ?? [], "--allow-private-webhooks"),
    ...(hooks.resolveHost ? { resolve: hooks.resolveHost } : {}),
  });
  const webhooks = new WebhookDispatcher({
    store,
    guard: webhookGuard,
    log: root.child({ component: "webhooks" }),
  });
  webhooks.start();
  teardown.defer("webhook dispatcher", () => webhooks.stop());
  registerProxyMetrics(metrics.registry, () => front.proxy.metrics);
  const apiLog = root.child({ component: "api" });
  const apiHandler = createApi({
    store,
    orchestrator,
    builds,
    volumes,
    secrets,
    identityTokens,
    sampler,
    webhookGuard,
    log: apiLog,
    domain: front.publicDomain,
    envdVersion: ENVD_VERSION,
    platformVersion: PLATFORM_VERSION,
    limits,
    diskSizeMB: config.diskSizeMB,
    diskFreeSpaceMB: (sizeMB) => diskFreeSpaceMB(sizeMB, path.join(config.dataDir, "disks")),
    availableRuntimes: [...runtimes.keys()],
    ...(config.tenantRuntimes ? { tenantRuntimes: config.tenantRuntimes } : {}),
    consoleLogs: (id) => host.consoleLogs(id),
    checkEgressProxy: (input) =>
      checkEgressProxy(input, { resolve: (name) => egress.dns.resolve4(name), forbidden: egress.forbidden }),
    networkDecisions: (id, after, limit) => egress.log.since(id, after, limit),
    dropWarmPools: (templateId) => warmPool.discardTemplate(templateId),
    observeRequest: metrics.observeApiRequest,
    observeCreate: metrics.observeSandboxCreate,
    metrics: metrics.registry,
    metricsToken,
    surfaces: [
      ...(node ? [node.surface()] : []),
      ...withConsole(config.consoleDir, {
        version: PLATFORM_VERSION,
        domain: config.domain,
        envdUrl: `http://${ENVD_PORT}-{sandboxID}.${config.domain}:${front.proxy.port}`,
        cluster: false,
      }),
    ],
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
    secrets,
    identityTokens,
    placeholders,
    firstApiKey,
    defaultTeam: () => store.teams.defaultTeam(),
    close: async (opts = {}) => {
      stopping.destroy = opts.destroy === true;
      await teardown.unwind();
    },
  };
}

/** The API's URL as a client on this host reaches it (an unspecified address is `localhost`). */
function apiUrlOf(host: string, port: number): string {
  const name = host === "0.0.0.0" || host === "::" || host === "" ? "localhost" : host;
  return `http://${name.includes(":") ? `[${name}]` : name}:${port}`;
}
