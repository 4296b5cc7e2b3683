import type { ClusterNodeConfig } from "./cluster/node-role.js";
import type { RuntimeName } from "./runtime/container-runtime.js";

export type { ClusterNodeConfig };

export interface PlatformConfig {
  /** Where the store, images, layers and sandboxes live. */
  dataDir: string;
  /** `postgres://…` for PostgreSQL; SQLite in dataDir otherwise. */
  databaseUrl?: string;
  apiPort: number;
  proxyPort: number;
  host: string;
  /** Sandboxes are reached at `{port}-{sandboxID}.{domain}` through the proxy. */
  domain: string;
  /** Runtime for sandboxes that ask for none; the best available when unset. */
  defaultRuntime?: RuntimeName;
  /**
   * Runtimes a create may ask for (`"runtime"` in its body); every available one when unset.
   * Without runc, tenants' code never shares the host's kernel directly (403 on a create asking).
   */
  tenantRuntimes?: RuntimeName[];
  /** Directory of the envd bundle (`envd.cjs`). */
  envdDir: string;
  /** Prefix of netns, veth and firewall names this platform owns (≤ 6 chars). */
  networkPrefix: string;
  /** Pool of /30 networks for sandboxes. */
  networkCidr: string;
  deepPauseAfterMs: number;
  maxSandboxesPerTeam: number;
  maxTimeoutSeconds: number;
  /** Disk of a sandbox's writable layer, and the most a team may be given (`x team limits` lowers it). */
  diskSizeMB: number;
  /**
   * Limits of every team, which `x team limits` may lower (see platform-limits.ts): vCPUs and
   * memory (MiB) of one sandbox, the host's cores and half its memory by default; one volume's
   * capacity (MiB), 64 GiB or the data directory's disk when smaller; and `LIMIT_DEFAULTS`.
   */
  maxCpuCount?: number;
  maxMemoryMB?: number;
  maxVolumeSizeMB?: number;
  maxVolumesPerTeam?: number;
  maxTemplatesPerTeam?: number;
  maxSnapshotsPerTeam?: number;
  /** Sandboxes one fork request may start (at most `FORK_COUNT_CEILING`, openapi.yaml's). */
  maxForkCount?: number;
  /** COPY archives kept per team, by count and MiB; the oldest go first past either. */
  maxUploadsPerTeam?: number;
  maxUploadsMBPerTeam?: number;
  /** Capacity of a volume whose create does not give one. */
  volumeSizeMB: number;
  /**
   * Ready sandboxes kept at least per template build and runtime, so create need not boot; with
   * 0 (and no `warmPoolMax`) none are kept and every create boots its own.
   */
  warmPoolSize: number;
  /** Ready sandboxes kept at most per template build and runtime, when demand asks; 16 by default (0 when `warmPoolSize` is 0). */
  warmPoolMax?: number;
  /** Sandboxes booting at once (a boot is mostly CPU); cores + 1 by default. */
  bootConcurrency?: number;
  /** Host memory (MiB) kept available: no sandbox boots below it (503); 10% of the host's by default. */
  memoryReserveMB?: number;
  /**
   * Tasks (processes and threads) a sandbox's commands may run, past which the session with the
   * most is ended; by default one per MiB of memory under runc and 128 per account under gVisor (see
   * sandbox/resource-limits.ts).
   */
  processLimit?: number;
  /** Weigh down the CPU of sandboxes that keep a core busy, for their neighbours (default on). */
  cpuFairness?: boolean;
  /**
   * A sandbox's console log (envd's lines, and whatever its root writes to /proc/1/fd/1) keeps
   * its newest this many MiB, trimmed once it holds twice that; 4 by default (see
   * sandbox/console-log.ts).
   */
  consoleLogMaxMB?: number;
  /**
   * What one template build's log keeps of its commands' output, in lines and MiB; past either
   * one line says the output was truncated. 50000 lines and 16 MiB by default (build-log.ts).
   */
  buildLogMaxLines?: number;
  buildLogMaxMB?: number;
  /**
   * Private IPv4 ranges (CIDRs) sandboxes with internet may reach, e.g. a package mirror on the
   * operator's network. Every other private, loopback, link-local or CGNAT address is refused.
   */
  allowInternal: string[];
  /**
   * Resolvers the platform's DNS service for sandboxes forwards to (`IP` or `IP:PORT`); the
   * host's own (resolv.conf) when unset, none (every query refused) when empty.
   */
  dnsUpstreams?: string[];
  /**
   * CA certificate files (PEM) the egress proxy trusts, besides the system's store, when it
   * connects to the origin of a request it rewrites for a sandbox's `network.rules`.
   */
  egressCaFiles?: string[];
  /** The proxy's HTTPS port for `https://{port}-{id}.{domain}` (0: any free one); no HTTPS when unset. */
  tlsPort?: number;
  /** The operator's certificate (PEM, for `*.{domain}`) and its key; a local CA's otherwise. */
  tlsCertFile?: string;
  tlsKeyFile?: string;
  /** `IP:PORT` where a DNS listener answers `{domain}` and `*.{domain}` with the proxy's address. */
  dnsListen?: string;
  /**
   * Mirrors tried before a registry when a template pulls an image, as `REGISTRY=MIRROR`
   * (`docker.io=127.0.0.1:5000`; `http://` before the mirror allows plain HTTP).
   */
  registryMirrors?: string[];
  /** Registries (`host[:port]`) pulled from over plain HTTP or unverified TLS; allowed loopback ones always are. */
  insecureRegistries?: string[];
  /**
   * Internal registries (`HOST[:PORT]`, `IP[:PORT]` or a CIDR) templates may pull from, and
   * their token services may be at. Every other loopback, link-local, private, CGNAT or
   * reserved address (and this host's own) is refused; the registries and mirrors of
   * `registryMirrors` and `insecureRegistries` are allowed as well.
   */
  allowPrivateRegistries?: string[];
  /**
   * Mirrors (`host[:port]` of `registryMirrors`) a team's registry credentials are sent to as
   * well; otherwise they go only to the registry they were given for.
   */
  credentialMirrors?: string[];
  /**
   * Internal destinations (`HOST[:PORT]`, `IP[:PORT]` or a CIDR) webhooks may be sent to; every
   * other loopback, link-local, private, CGNAT or reserved address (and this host's own) is
   * refused, at create and at each delivery.
   */
  allowPrivateWebhooks?: string[];
  /** The web console's built files (`@x/console`'s `dist/`), served under `/console/`; no console when unset. */
  consoleDir?: string;
  /**
   * A file holding the bearer token `GET /metrics` then needs (401 without it), and with
   * which a scrape sees per-template labels; unset, `/metrics` is anonymous and shows no
   * label that identifies a tenant.
   */
  metricsTokenFile?: string;
  /**
   * The 32-byte key (a file, apart from the database) that seals teams' secrets at rest; made
   * under `<dataDir>/keys/secrets.key` on first start when unset. A cluster's nodes must all
   * be given the same file.
   */
  secretsKeyFile?: string;
  /**
   * The ES256 key (a private JWK, in a file) that signs sandboxes' identity tokens; made under
   * `<dataDir>/keys/identity.jwk` on first start when unset. A cluster's nodes must all be
   * given the same file.
   */
  identityKeyFile?: string;
  /**
   * The identity tokens' `iss`: the URL clients reach the platform API at, where relying
   * parties find `/.well-known/openid-configuration`; `http://HOST:PORT` of the API by default.
   */
  identityIssuer?: string;
  /** The SPIFFE trust domain of identity tokens' `sub`; `domain` by default. */
  identityTrustDomain?: string;
  /** Set for `x node`: this platform is a node of a cluster on the PostgreSQL catalog. */
  cluster?: ClusterNodeConfig;
}

/** Ready sandboxes kept at most per pool: `warmPoolMax`, else 16 (at least `warmPoolSize`), none when `warmPoolSize` is 0. */
export function warmPoolMax(config: Pick<PlatformConfig, "warmPoolSize" | "warmPoolMax">): number {
  return config.warmPoolMax ?? (config.warmPoolSize > 0 ? Math.max(16, config.warmPoolSize) : 0);
}

/** The limits of every team that do not depend on the host (see `PlatformConfig`). */
export const LIMIT_DEFAULTS = {
  maxVolumesPerTeam: 100,
  maxTemplatesPerTeam: 100,
  maxSnapshotsPerTeam: 100,
  maxForkCount: 16,
  maxUploadsPerTeam: 1000,
  maxUploadsMBPerTeam: 16 * 1024,
} as const satisfies Partial<PlatformConfig>;

/** The most sandboxes one fork request may ask for at all (openapi.yaml's maximum of `count`). */
export const FORK_COUNT_CEILING = 100;

export const DEFAULTS: Omit<PlatformConfig, "envdDir"> = {
  dataDir: "/var/lib/x",
  apiPort: 3000,
  proxyPort: 3002,
  host: "0.0.0.0",
  domain: "sandbox.localhost",
  networkPrefix: "x",
  networkCidr: "10.200.0.0/16",
  deepPauseAfterMs: 10 * 60_000,
  maxSandboxesPerTeam: 200,
  maxTimeoutSeconds: 24 * 3600,
  diskSizeMB: 2048,
  volumeSizeMB: 1024,
  warmPoolSize: 2,
  allowInternal: [],
};
