import { parseArgs } from "node:util";
import {
  DEFAULTS,
  destinationRules,
  FORK_COUNT_CEILING,
  isShippedTemplate,
  LOG_LEVELS,
  type LogFormat,
  type LogLevel,
  type PlatformConfig,
  registrySettings,
  SHIPPED_TEMPLATES,
} from "@x/platform";
import { consoleDistDir, envdBundleDir } from "./envd-dir.js";
import { STORE_OPTIONS, storeLocation } from "./store-location.js";
import { parsing } from "./usage.js";

/** `x serve`'s flags and environment variables, read into the platform's configuration. */

export const DEFAULT_TLS_PORT = 3003;

export interface ServeOptions {
  config: PlatformConfig;
  demo: boolean;
  /** Shipped templates kept built. */
  templates: string[];
  help: boolean;
  logLevel: LogLevel;
  /** Unset: pretty when stdout and stderr are both terminals, JSON otherwise. */
  logFormat?: LogFormat;
}

/**
 * `x serve`'s options from its flags and the environment; a mistake in them is a usage error
 * (exit 2), found before anything is set up. `command` names the command in messages (`x node`
 * takes these options too).
 */
export function serveConfig(argv: string[], command = "x serve"): ServeOptions {
  return parsing(command, () => readServeOptions(argv));
}

function readServeOptions(argv: string[]): ServeOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      "proxy-port": { type: "string" },
      ...STORE_OPTIONS,
      runtime: { type: "string" },
      "tenant-runtimes": { type: "string" },
      domain: { type: "string" },
      host: { type: "string" },
      "network-prefix": { type: "string" },
      "network-cidr": { type: "string" },
      "pool-size": { type: "string" },
      "pool-max": { type: "string" },
      "boot-concurrency": { type: "string" },
      "memory-reserve": { type: "string" },
      "process-limit": { type: "string" },
      "deep-pause-after": { type: "string" },
      "console-log-max": { type: "string" },
      "build-log-max-lines": { type: "string" },
      "build-log-max": { type: "string" },
      "volume-size": { type: "string" },
      "max-sandboxes": { type: "string" },
      "max-timeout": { type: "string" },
      "max-cpu": { type: "string" },
      "max-memory": { type: "string" },
      "disk-size": { type: "string" },
      "max-volume-size": { type: "string" },
      "max-volumes": { type: "string" },
      "max-templates": { type: "string" },
      "max-snapshots": { type: "string" },
      "max-fork-count": { type: "string" },
      "max-uploads": { type: "string" },
      "max-uploads-mb": { type: "string" },
      "allow-internal": { type: "string" },
      "dns-upstream": { type: "string" },
      "egress-ca": { type: "string" },
      "tls-port": { type: "string" },
      "tls-cert": { type: "string" },
      "tls-key": { type: "string" },
      "dns-listen": { type: "string" },
      "secrets-key-file": { type: "string" },
      "identity-key-file": { type: "string" },
      "metrics-token-file": { type: "string" },
      "identity-issuer": { type: "string" },
      "identity-trust-domain": { type: "string" },
      "registry-mirror": { type: "string", multiple: true },
      "insecure-registry": { type: "string", multiple: true },
      "allow-private-registry": { type: "string", multiple: true },
      "send-credentials-to-mirror": { type: "string", multiple: true },
      "allow-private-webhooks": { type: "string", multiple: true },
      "log-level": { type: "string" },
      "log-format": { type: "string" },
      templates: { type: "string" },
      demo: { type: "boolean", default: false },
      help: { type: "boolean", short: "h", default: false },
    },
    strict: true,
  });
  const env = process.env;
  const runtime = values.runtime ?? env.X_RUNTIME;
  if (runtime && runtime !== "runsc" && runtime !== "runc")
    throw new Error(`--runtime must be runsc or runc, got ${runtime}`);
  const port = (v: string | undefined, fallback: number, flag: string) => {
    if (v === undefined) return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535)
      throw new Error(`${flag} must be a port number, got ${v}`);
    return n;
  };
  const poolSize = values["pool-size"] ?? env.X_POOL_SIZE;
  if (poolSize !== undefined && !/^\d+$/.test(poolSize))
    throw new Error(`--pool-size must be a whole number, got ${poolSize}`);
  const whole = (v: string | undefined, flag: string, min = 0) => {
    if (v === undefined) return undefined;
    if (!/^\d+$/.test(v) || Number(v) < min)
      throw new Error(`${flag} must be a whole number ≥ ${min}, got ${v}`);
    return Number(v);
  };
  const poolMax = whole(values["pool-max"] ?? env.X_POOL_MAX, "--pool-max");
  const bootConcurrency = whole(
    values["boot-concurrency"] ?? env.X_BOOT_CONCURRENCY,
    "--boot-concurrency",
    1,
  );
  const memoryReserve = whole(values["memory-reserve"] ?? env.X_MEMORY_RESERVE, "--memory-reserve");
  const processLimit = whole(values["process-limit"] ?? env.X_PROCESS_LIMIT, "--process-limit", 16);
  const volumeSize = whole(values["volume-size"] ?? env.X_VOLUME_SIZE, "--volume-size", 16);
  const maxSandboxes = whole(values["max-sandboxes"] ?? env.X_MAX_SANDBOXES, "--max-sandboxes", 1);
  const maxTimeout = whole(values["max-timeout"] ?? env.X_MAX_TIMEOUT, "--max-timeout", 1);
  const maxCpuCount = whole(values["max-cpu"] ?? env.X_MAX_CPU, "--max-cpu", 1);
  const maxMemoryMB = whole(values["max-memory"] ?? env.X_MAX_MEMORY, "--max-memory", 128);
  const diskSizeMB = whole(values["disk-size"] ?? env.X_DISK_SIZE, "--disk-size", 64);
  const maxVolumeSizeMB = whole(values["max-volume-size"] ?? env.X_MAX_VOLUME_SIZE, "--max-volume-size", 16);
  const maxVolumesPerTeam = whole(values["max-volumes"] ?? env.X_MAX_VOLUMES, "--max-volumes", 1);
  const maxTemplatesPerTeam = whole(values["max-templates"] ?? env.X_MAX_TEMPLATES, "--max-templates", 1);
  const maxSnapshotsPerTeam = whole(values["max-snapshots"] ?? env.X_MAX_SNAPSHOTS, "--max-snapshots", 1);
  const maxForkCount = whole(values["max-fork-count"] ?? env.X_MAX_FORK_COUNT, "--max-fork-count", 1);
  if (maxForkCount !== undefined && maxForkCount > FORK_COUNT_CEILING)
    throw new Error(`--max-fork-count must be at most ${FORK_COUNT_CEILING}, got ${maxForkCount}`);
  const maxUploadsPerTeam = whole(values["max-uploads"] ?? env.X_MAX_UPLOADS, "--max-uploads", 1);
  const maxUploadsMBPerTeam = whole(values["max-uploads-mb"] ?? env.X_MAX_UPLOADS_MB, "--max-uploads-mb", 1);
  const deepPause = values["deep-pause-after"] ?? env.X_DEEP_PAUSE_AFTER;
  if (deepPause !== undefined && !/^\d+$/.test(deepPause))
    throw new Error(`--deep-pause-after must be a whole number of seconds, got ${deepPause}`);
  const consoleLogMaxMB = whole(values["console-log-max"] ?? env.X_CONSOLE_LOG_MAX, "--console-log-max", 1);
  const buildLogMaxLines = whole(
    values["build-log-max-lines"] ?? env.X_BUILD_LOG_MAX_LINES,
    "--build-log-max-lines",
    100,
  );
  const buildLogMaxMB = whole(values["build-log-max"] ?? env.X_BUILD_LOG_MAX, "--build-log-max", 1);
  const list = (v: string | undefined) =>
    v === undefined
      ? undefined
      : v
          .split(",")
          .map((x) => x.trim())
          .filter(Boolean);
  const tenantRuntimes = list(values["tenant-runtimes"] ?? env.X_TENANT_RUNTIMES);
  for (const name of tenantRuntimes ?? []) {
    if (name !== "runsc" && name !== "runc")
      throw new Error(`--tenant-runtimes: '${name}' is not a runtime (runsc, runc)`);
  }
  if (tenantRuntimes?.length === 0)
    throw new Error("--tenant-runtimes: name at least one runtime (runsc, runc)");
  const dnsUpstream = values["dns-upstream"] ?? env.X_DNS_UPSTREAM;
  const egressCa = list(values["egress-ca"] ?? env.X_EGRESS_CA);
  const tlsPort = values["tls-port"] ?? env.X_TLS_PORT;
  const tlsCert = values["tls-cert"] ?? env.X_TLS_CERT;
  const tlsKey = values["tls-key"] ?? env.X_TLS_KEY;
  if ((tlsCert === undefined) !== (tlsKey === undefined))
    throw new Error("--tls-cert and --tls-key go together");
  const secretsKeyFile = values["secrets-key-file"] ?? env.X_SECRETS_KEY_FILE;
  const identityKeyFile = values["identity-key-file"] ?? env.X_IDENTITY_KEY_FILE;
  const metricsTokenFile = values["metrics-token-file"] ?? env.X_METRICS_TOKEN_FILE;
  const identityIssuer = values["identity-issuer"] ?? env.X_IDENTITY_ISSUER;
  if (identityIssuer !== undefined && !/^https?:\/\/[^/]/.test(identityIssuer))
    throw new Error(`--identity-issuer must be an http(s) URL, got ${identityIssuer}`);
  const identityTrustDomain = values["identity-trust-domain"] ?? env.X_IDENTITY_TRUST_DOMAIN;
  const dnsListen = values["dns-listen"] ?? env.X_DNS_LISTEN;
  if (dnsListen !== undefined && !/^(\[[^\]]+\]|[^:]+):\d+$/.test(dnsListen))
    throw new Error(`--dns-listen must be IP:PORT, got ${dnsListen}`);
  const registryMirrors = values["registry-mirror"] ?? list(env.X_REGISTRY_MIRRORS);
  const insecureRegistries = values["insecure-registry"] ?? list(env.X_INSECURE_REGISTRIES);
  const allowPrivateRegistries = values["allow-private-registry"] ?? list(env.X_ALLOW_PRIVATE_REGISTRIES);
  const credentialMirrors = values["send-credentials-to-mirror"] ?? list(env.X_SEND_CREDENTIALS_TO_MIRRORS);
  const allowPrivateWebhooks = values["allow-private-webhooks"] ?? list(env.X_ALLOW_PRIVATE_WEBHOOKS);
  // checked here so that a mistyped flag stops `x serve` before it sets anything up
  registrySettings({
    mirrors: registryMirrors,
    insecure: insecureRegistries,
    allowPrivate: allowPrivateRegistries,
    credentialMirrors,
  });
  destinationRules(allowPrivateWebhooks ?? [], "--allow-private-webhooks");
  const templates = list(values.templates ?? env.X_TEMPLATES) ?? [];
  for (const name of templates) {
    if (!isShippedTemplate(name))
      throw new Error(
        `--templates: '${name}' is not a template that ships with the platform (${SHIPPED_TEMPLATES.join(", ")})`,
      );
  }
  const logLevel = values["log-level"] ?? env.X_LOG_LEVEL ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(logLevel))
    throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got ${logLevel}`);
  const logFormat = values["log-format"] ?? env.X_LOG_FORMAT;
  if (logFormat !== undefined && logFormat !== "json" && logFormat !== "pretty")
    throw new Error(`--log-format must be json or pretty, got ${logFormat}`);
  return {
    logLevel: logLevel as LogLevel,
    logFormat,
    demo: values.demo ?? false,
    templates,
    help: values.help ?? false,
    config: {
      ...DEFAULTS,
      apiPort: port(values.port ?? env.X_PORT, DEFAULTS.apiPort, "--port"),
      proxyPort: port(values["proxy-port"] ?? env.X_PROXY_PORT, DEFAULTS.proxyPort, "--proxy-port"),
      ...storeLocation(values),
      defaultRuntime: runtime as PlatformConfig["defaultRuntime"],
      ...(tenantRuntimes ? { tenantRuntimes: tenantRuntimes as PlatformConfig["tenantRuntimes"] } : {}),
      domain: values.domain ?? env.X_DOMAIN ?? DEFAULTS.domain,
      host: values.host ?? env.X_HOST ?? DEFAULTS.host,
      networkPrefix: values["network-prefix"] ?? env.X_NETWORK_PREFIX ?? DEFAULTS.networkPrefix,
      networkCidr: values["network-cidr"] ?? env.X_NETWORK_CIDR ?? DEFAULTS.networkCidr,
      deepPauseAfterMs: deepPause === undefined ? DEFAULTS.deepPauseAfterMs : Number(deepPause) * 1000,
      ...(consoleLogMaxMB !== undefined ? { consoleLogMaxMB } : {}),
      ...(buildLogMaxLines !== undefined ? { buildLogMaxLines } : {}),
      ...(buildLogMaxMB !== undefined ? { buildLogMaxMB } : {}),
      warmPoolSize: poolSize === undefined ? DEFAULTS.warmPoolSize : Number(poolSize),
      ...(poolMax !== undefined ? { warmPoolMax: poolMax } : {}),
      ...(bootConcurrency !== undefined ? { bootConcurrency } : {}),
      ...(memoryReserve !== undefined ? { memoryReserveMB: memoryReserve } : {}),
      ...(processLimit !== undefined ? { processLimit } : {}),
      ...(volumeSize !== undefined ? { volumeSizeMB: volumeSize } : {}),
      ...(maxSandboxes !== undefined ? { maxSandboxesPerTeam: maxSandboxes } : {}),
      ...(maxTimeout !== undefined ? { maxTimeoutSeconds: maxTimeout } : {}),
      ...definedOnly({
        maxCpuCount,
        maxMemoryMB,
        diskSizeMB,
        maxVolumeSizeMB,
        maxVolumesPerTeam,
        maxTemplatesPerTeam,
        maxSnapshotsPerTeam,
        maxForkCount,
        maxUploadsPerTeam,
        maxUploadsMBPerTeam,
      }),
      allowInternal: list(values["allow-internal"] ?? env.X_ALLOW_INTERNAL) ?? DEFAULTS.allowInternal,
      dnsUpstreams: dnsUpstream === "none" ? [] : list(dnsUpstream),
      ...(egressCa ? { egressCaFiles: egressCa } : {}),
      ...(tlsPort === "off" ? {} : { tlsPort: port(tlsPort, DEFAULT_TLS_PORT, "--tls-port") }),
      ...(tlsCert !== undefined ? { tlsCertFile: tlsCert, tlsKeyFile: tlsKey } : {}),
      ...(dnsListen !== undefined ? { dnsListen } : {}),
      ...(secretsKeyFile !== undefined ? { secretsKeyFile } : {}),
      ...(identityKeyFile !== undefined ? { identityKeyFile } : {}),
      ...(metricsTokenFile !== undefined ? { metricsTokenFile } : {}),
      ...(identityIssuer !== undefined ? { identityIssuer } : {}),
      ...(identityTrustDomain !== undefined ? { identityTrustDomain } : {}),
      ...(registryMirrors ? { registryMirrors } : {}),
      ...(insecureRegistries ? { insecureRegistries } : {}),
      ...(allowPrivateRegistries ? { allowPrivateRegistries } : {}),
      ...(credentialMirrors ? { credentialMirrors } : {}),
      ...(allowPrivateWebhooks ? { allowPrivateWebhooks } : {}),
      envdDir: envdBundleDir(),
      consoleDir: consoleDistDir(),
    },
  };
}

/** The settings given: one left out keeps its default. */
function definedOnly<T extends Record<string, number | undefined>>(
  values: T,
): Partial<Record<keyof T, number>> {
  return Object.fromEntries(Object.entries(values).filter(([, v]) => v !== undefined)) as Partial<
    Record<keyof T, number>
  >;
}
