import type { IncomingMessage, ServerResponse } from "node:http";
import { openapiDocument } from "@x/platform-client";
import type { IdentityTokens } from "../identity/identity-tokens.js";
import type { Logger } from "../lib/log.js";
import type { StoredEgressProxy } from "../model/network.js";
import type { RuntimeName } from "../model/sandbox.js";
import type { PlatformLimits } from "../model/team.js";
import type { EgressProxyInput } from "../network/byop.js";
import type { DestinationGuard } from "../network/destination-guard.js";
import type { Registry } from "../observability/metrics.js";
import type { MetricsSampler } from "../observability/metrics-sampler.js";
import type { Orchestrator } from "../orchestrator/orchestrator.js";
import type { Secrets } from "../secrets/secrets.js";
import type { Store } from "../store/index.js";
import type { BuildService } from "../templates/build-service.js";
import type { Volumes } from "../volumes/volumes.js";
import { createAuthenticator } from "./authenticate.js";
import type { Handlers } from "./handler.js";
import { IdempotentCreates } from "./idempotent-create.js";
import { OpenApiRouter } from "./openapi.js";
import { eventRoutes } from "./routes/events.js";
import { identityRoutes } from "./routes/identity.js";
import { keyRoutes } from "./routes/keys.js";
import { nodeRoutes } from "./routes/nodes.js";
import { oauthRoutes } from "./routes/oauth.js";
import { sandboxLogsRoutes } from "./routes/sandbox-logs.js";
import { sandboxMetricsRoutes } from "./routes/sandbox-metrics.js";
import { type NetworkDecision, sandboxNetworkRoutes } from "./routes/sandbox-network.js";
import { sandboxRoutes } from "./routes/sandboxes.js";
import { secretRoutes } from "./routes/secrets.js";
import { snapshotRoutes } from "./routes/snapshots.js";
import { teamRoutes } from "./routes/teams.js";
import { templateRoutes } from "./routes/templates.js";
import { volumeContentRoutes } from "./routes/volume-content.js";
import { volumeRoutes } from "./routes/volumes.js";
import { createApiHandler } from "./server.js";

export interface ApiOptions {
  store: Store;
  orchestrator: Orchestrator;
  builds: BuildService;
  volumes: Volumes;
  secrets: Secrets;
  identityTokens: IdentityTokens;
  sampler: MetricsSampler;
  log: Logger;
  domain: string;
  envdVersion: string;
  platformVersion: string;
  /** The platform's limits of every team (platform-limits.ts); a team's own may lower them. */
  limits: PlatformLimits;
  diskSizeMB: number;
  /** Free space (MiB) a fresh sandbox's disk of this size leaves its writers (rootfs/disk.ts). */
  diskFreeSpaceMB(sizeMB: number): Promise<number>;
  availableRuntimes: RuntimeName[];
  /** Runtimes a create may ask for (`--tenant-runtimes`); every available one when unset. */
  tenantRuntimes?: RuntimeName[];
  /** Paths of a sandbox's console logs, oldest first (see SandboxHost.consoleLogs). */
  consoleLogs(sandboxId: string): string[];
  /** Checks a sandbox's own SOCKS5 proxy and seals its password (network/byop.ts). */
  checkEgressProxy?(input: EgressProxyInput): Promise<StoredEgressProxy>;
  /** Where webhooks may be sent (checked at create and update, and again by every delivery). */
  webhookGuard: DestinationGuard;
  /** A sandbox's egress decisions after a cursor (the decision log). */
  networkDecisions(sandboxId: string, after: number, limit: number): NetworkDecision[];
  /** Lets go of the warm pools of a template (its layers go, or its pool bounds changed). */
  dropWarmPools(templateId: string): Promise<void>;
  observeRequest?(op: string, status: number, seconds: number): void;
  /** Served as `GET /metrics` on the API's port. */
  metrics?: Registry;
  /** The bearer token `/metrics` needs (front-door.ts); anonymous, without tenants' labels, when unset. */
  metricsToken?: string;
  /** Other surfaces on the API's port, before the API (a node's `/node/…` routes). */
  surfaces?: Array<(req: IncomingMessage, res: ServerResponse) => boolean>;
  observeCreate?(runtime: RuntimeName, seconds: number): void;
}

/** The platform API as one request listener: every operation of openapi.yaml, routed and checked against it. */
export function createApi(o: ApiOptions): (req: IncomingMessage, res: ServerResponse) => void {
  const present = { domain: o.domain, envdVersion: o.envdVersion };
  const { limits } = o;
  const handlers: Handlers = {
    getHealth: async () => ({ status: 200, body: { status: "ok", version: o.platformVersion } }),
    ...keyRoutes(o.store),
    ...oauthRoutes(o.store),
    ...nodeRoutes(o.store),
    ...eventRoutes(o.store, o.webhookGuard),
    ...teamRoutes({ store: o.store, limits }),
    ...sandboxRoutes({
      ...present,
      limits,
      store: o.store,
      orchestrator: o.orchestrator,
      volumes: o.volumes,
      availableRuntimes: o.availableRuntimes,
      ...(o.tenantRuntimes ? { tenantRuntimes: o.tenantRuntimes } : {}),
      ...(o.checkEgressProxy ? { checkEgressProxy: o.checkEgressProxy } : {}),
      observeCreate: o.observeCreate,
      idempotentCreates: new IdempotentCreates({
        store: o.store,
        log: o.log.child({ component: "idempotency" }),
      }),
    }),
    ...sandboxMetricsRoutes({ store: o.store, sampler: o.sampler }),
    ...sandboxLogsRoutes({ store: o.store, consoleLogs: o.consoleLogs }),
    ...sandboxNetworkRoutes({ store: o.store, decisions: o.networkDecisions }),
    ...templateRoutes({
      ...o.builds,
      store: o.store,
      envdVersion: o.envdVersion,
      diskSizeMB: o.diskSizeMB,
      diskFreeSpaceMB: o.diskFreeSpaceMB,
      limits,
      dropWarmPools: o.dropWarmPools,
    }),
    ...volumeRoutes({ volumes: o.volumes, limits }),
    ...secretRoutes(o.secrets),
    ...identityRoutes(o.identityTokens),
    ...volumeContentRoutes(o.volumes),
    ...snapshotRoutes({
      ...present,
      limits,
      store: o.store,
      orchestrator: o.orchestrator,
      layers: o.builds.layers,
    }),
  };
  return createApiHandler({
    router: new OpenApiRouter(openapiDocument),
    handlers,
    authenticate: createAuthenticator(o.store, o.log),
    log: o.log,
    observe: o.observeRequest,
    metrics: o.metrics,
    metricsToken: o.metricsToken,
    surfaces: o.surfaces,
  });
}
