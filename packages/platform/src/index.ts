export { presentKey } from "./api/routes/keys.js";
export { type CleanupConfig, type CleanupReport, cleanUpLeftovers } from "./cleanup.js";
export {
  DEFAULT_NODE_TIMEOUT_MS,
  type RunningRole,
  requirePostgres,
  startApiRole,
  startProxyRole,
} from "./cluster/roles.js";
export {
  type ClusterNodeConfig,
  DEFAULTS,
  FORK_COUNT_CEILING,
  LIMIT_DEFAULTS,
  type PlatformConfig,
} from "./config.js";
export { createLogger, LOG_LEVELS, type LogFormat, type Logger, type LogLevel } from "./lib/log.js";
export { SPANS_CHANNEL, type SpanMessage } from "./lib/spans.js";
export { NO_PLACEHOLDER_VALUES, type PlaceholderValues } from "./model/placeholders.js";
export { type ApiKey, SYSTEM_NAMESPACE, type Team, type TeamLimits } from "./model/team.js";
export { isShippedTemplate, SHIPPED_TEMPLATES } from "./model/template.js";
export { destinationRules } from "./network/destination-guard.js";
export {
  ENVD_VERSION,
  PLATFORM_VERSION,
  type Platform,
  type PlatformHooks,
  startPlatform,
} from "./platform.js";
export type { ImageBuildProgress } from "./rootfs/base-image.js";
export { type ClusterNode, openStore, type Store } from "./store/index.js";
export { systemTeam } from "./templates/base-template.js";
export { registrySettings } from "./templates/registry/settings.js";
