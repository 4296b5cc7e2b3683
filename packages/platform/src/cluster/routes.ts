/**
 * Where `x api` sends each operation of the platform API: one entry per operation of
 * openapi.yaml, keyed like the handlers of `x serve` (`Handlers`), so an operation added to the
 * spec without a route here fails `tsc`, as one without a handler does.
 */
import type { OperationId } from "../api/handler.js";

export type RouteBy =
  /** Answered by the api itself. */
  | "here"
  /** What the catalog says alone: any ready node answers. */
  | "any"
  /** The node of the path's sandbox (`sandboxID`); a lost one is refused here, saying why. */
  | "sandbox"
  /** The node of the path's sandbox; a lost one's record is shown or forgotten by any node. */
  | "sandbox-record"
  /** Each node for the latest metrics of its own sandboxes, gathered into one answer. */
  | "sandboxes-metrics"
  /** The node holding the path's volume (`volumeID`). */
  | "volume"
  /** The node where the path's build (`buildID`) was made. */
  | "build"
  /** The node where the path's template (`templateID`) has its next build waiting for files. */
  | "build-files"
  /** A new sandbox: the node placement chooses (a create, reconciled on failure: api-router.ts). */
  | "place-sandbox"
  /** A new volume: the node placement chooses. */
  | "place-volume"
  /** A new template and its first build: the node placement chooses. */
  | "place-build";

export const ROUTES: { readonly [Op in OperationId]: RouteBy } = {
  getHealth: "here",
  // the nodes mint identity tokens with the cluster's one identity key: any of them publishes it
  getIdentityJwks: "any",
  getOpenIdConfiguration: "any",
  listApiKeys: "any",
  createApiKey: "any",
  updateApiKey: "any",
  deleteApiKey: "any",
  listAccessTokens: "any",
  createAccessToken: "any",
  deleteAccessToken: "any",
  refreshAccessToken: "any",
  revokeOAuthToken: "any",
  listNodes: "any",
  listTeams: "any",
  getTeam: "any",
  getTeamMetrics: "any",
  getTeamMetricsMax: "any",

  listSandboxesLegacy: "any",
  listSandboxes: "any",
  createSandboxLegacy: "place-sandbox",
  createSandbox: "place-sandbox",
  listSandboxesMetrics: "sandboxes-metrics",
  listSnapshots: "any",
  getSandbox: "sandbox-record",
  killSandbox: "sandbox-record",
  pauseSandbox: "sandbox",
  resumeSandbox: "sandbox",
  connectSandboxLegacy: "sandbox",
  connectSandbox: "sandbox",
  setSandboxTimeout: "sandbox",
  refreshSandbox: "sandbox",
  getSandboxMetrics: "sandbox",
  getSandboxLogsLegacy: "sandbox",
  getSandboxLogs: "sandbox",
  forkSandbox: "sandbox",
  updateSandboxNetwork: "sandbox",
  getSandboxNetworkDecisions: "sandbox",
  createSnapshot: "sandbox",

  // events and webhooks are the catalog's (each node's dispatcher sends the deliveries)
  listSandboxEvents: "any",
  listSandboxEventsOf: "any",
  listWebhooks: "any",
  createWebhook: "any",
  getWebhook: "any",
  updateWebhook: "any",
  deleteWebhook: "any",
  listWebhookDeliveries: "any",

  // secrets are the catalog's; every node seals and opens them with the cluster's one key
  listSecrets: "any",
  createSecret: "any",
  getSecret: "any",
  updateSecret: "any",
  deleteSecret: "any",

  listVolumes: "any",
  createVolume: "place-volume",
  getVolume: "volume",
  deleteVolume: "volume",
  statVolumePath: "volume",
  updateVolumePathMetadata: "volume",
  removeVolumePath: "volume",
  listVolumeDir: "volume",
  makeVolumeDir: "volume",
  readVolumeFile: "volume",
  writeVolumeFile: "volume",

  listTemplates: "any",
  listTemplatesV2: "any",
  createTemplate: "place-build",
  getTemplateByAlias: "any",
  assignTemplateTags: "any",
  deleteTemplateTags: "any",
  getTemplate: "any",
  deleteTemplate: "any",
  updateTemplate: "any",
  updateTemplateV2: "any",
  listTemplateTags: "any",
  getTemplateFileUploadLink: "build-files",
  uploadTemplateFiles: "build-files",
  startTemplateBuild: "build",
  // status and logs are in the catalog
  getTemplateBuildStatus: "any",
  getTemplateBuildLogs: "any",
};

/** The path parameter each kind of route finds its node by. */
export const ROUTE_PARAM = {
  sandbox: "sandboxID",
  "sandbox-record": "sandboxID",
  volume: "volumeID",
  build: "buildID",
  "build-files": "templateID",
} as const satisfies Partial<Record<RouteBy, string>>;

/** The kind of thing a placed route makes, as placement weighs it. */
export const PLACED = {
  "place-sandbox": "sandbox",
  "place-volume": "volume",
  "place-build": "build",
} as const satisfies Partial<Record<RouteBy, string>>;
