/**
 * The host side of a platform, started in order: runtimes, the network and its egress
 * services, volumes, the sandbox host, the warm pool and the orchestrator, which adopts what a
 * previous process left running; then leftovers are swept and the firewall made. Each part
 * puts its stop on the platform's teardown (see platform.ts).
 */
import path from "node:path";
import { warmUpEnvd } from "./agent/init.js";
import { installEnvd } from "./agent/install.js";
import { poolRecordDir } from "./cleanup.js";
import type { NodeRole } from "./cluster/node-role.js";
import { type PlatformConfig, warmPoolMax } from "./config.js";
import type { FrontPorts } from "./front-ports.js";
import type { Logger } from "./lib/log.js";
import type { ChildRecords } from "./lib/owned-process.js";
import type { Teardown } from "./lib/teardown.js";
import type { PlaceholderValues } from "./model/placeholders.js";
import { effectiveLimits, type PlatformLimits, SYSTEM_NAMESPACE } from "./model/team.js";
import { hostResolvers, parseUpstream } from "./network/dns-forwarder.js";
import { EgressServices } from "./network/egress.js";
import { EgressCa, readCaFiles } from "./network/egress-ca.js";
import { createNetworkManager } from "./network/network-manager.js";
import { createPlatformMetrics } from "./observability/platform-metrics.js";
import { BootBudget } from "./orchestrator/boot-budget.js";
import { Orchestrator } from "./orchestrator/orchestrator.js";
import { WarmPool } from "./orchestrator/warm-pool.js";
import { availableRuntimes, chooseDefaultRuntime } from "./runtime/available.js";
import { devNullProblem } from "./runtime/host-devices.js";
import { reserveHostTasks } from "./runtime/host-limits.js";
import { CpuFairness } from "./sandbox/cpu-fairness.js";
import { SandboxHost } from "./sandbox/sandbox-host.js";
import type { Store } from "./store/index.js";
import { Volumes } from "./volumes/volumes.js";

export interface SandboxSideOptions {
  config: PlatformConfig;
  /** Every team's limits (platform-limits.ts): a team's warm pools stay within its sandboxes. */
  limits: PlatformLimits;
  store: Store;
  /** Beyond one machine: layers are fetched from other nodes, and sandboxes are lost until it joins. */
  node: NodeRole | undefined;
  children: ChildRecords;
  front: FrontPorts;
  teardown: Teardown;
  /** Read at stop: with `destroy`, every sandbox is killed and the network goes. */
  stopping: { destroy: boolean };
  /** Values of the placeholders in sandboxes' header transforms. */
  placeholders: PlaceholderValues;
  log: Logger;
}

export async function startSandboxSide(o: SandboxSideOptions) {
  const { config, store, node, children, front, teardown, stopping } = o;
  const root = o.log;
  const log = root.child({ component: "platform" });
  const runtimes = await availableRuntimes(config.dataDir);
  const defaultRuntime = chooseDefaultRuntime(runtimes, config.defaultRuntime, config.tenantRuntimes);
  await reserveHostTasks(log);
  const devNull = devNullProblem();
  if (devNull)
    log.warn({ problem: devNull }, "the host's /dev/null is not as it should be; sandboxes may be why");

  const network = createNetworkManager({
    prefix: config.networkPrefix,
    cidr: config.networkCidr,
    allowInternal: config.allowInternal,
  });
  // what the egress proxy never reaches besides this host: the cluster's nodes and its catalog
  const catalogHost =
    config.databaseUrl && /^postgres(ql)?:\/\//.test(config.databaseUrl)
      ? hostOf(config.databaseUrl)
      : undefined;
  const clusterHosts =
    node || catalogHost
      ? async () => [
          ...(catalogHost ? [catalogHost] : []),
          ...(node
            ? (await store.nodes.list()).flatMap((n) => [hostOf(n.apiUrl), hostOf(n.trafficUrl)])
            : []),
        ]
      : undefined;
  // the CA sandboxes trust for header transforms; its key stays in the data directory
  const egressCa = await EgressCa.open(path.join(config.dataDir, "egress-ca"));
  const egress = new EgressServices({
    network,
    upstreams: config.dnsUpstreams ? config.dnsUpstreams.map((u) => parseUpstream(u)) : await hostResolvers(),
    children,
    ...(clusterHosts ? { clusterHosts } : {}),
    transforms: {
      ca: egressCa,
      trusted: await readCaFiles(config.egressCaFiles ?? []),
      placeholders: o.placeholders,
      teamOf: async (id) => (await store.sandboxes.get(id))?.teamId,
    },
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
    egressCa: egressCa.cert,
    processLimit: config.processLimit,
    volumeSource: (id) => volumes.source(id),
    ...(node ? { ensureLayers: node.ensureLayers } : {}),
    ...(config.consoleLogMaxMB !== undefined ? { consoleLogMaxBytes: config.consoleLogMaxMB * 2 ** 20 } : {}),
    log: root.child({ component: "sandbox" }),
  });
  teardown.defer("console logs", () => host.close());
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
    // members kept for a team are its sandboxes-to-be: within its limit, less what it runs
    stockAllowance: async (teamId) => {
      const team = await store.teams.getTeam(teamId);
      if (!team) return 0;
      if (team.namespace === SYSTEM_NAMESPACE) return Number.POSITIVE_INFINITY;
      return effectiveLimits(team, o.limits).sandboxes - (await store.sandboxes.countLive(teamId));
    },
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
  // adopted sandboxes' console logs too, found by their networks
  host.watchConsoleLogs();
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
  return { runtimes, defaultRuntime, egress, volumes, host, metrics, warmPool, orchestrator };
}

/** The host of a URL (brackets of an IPv6 literal taken off); "" for one that does not parse. */
function hostOf(url: string): string {
  try {
    return new URL(url).hostname.replace(/^\[(.*)\]$/, "$1");
  } catch {
    return "";
  }
}
