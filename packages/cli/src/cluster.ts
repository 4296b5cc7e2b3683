/**
 * The cluster's roles as commands: `x node` (a host of sandboxes), `x api` and `x proxy` (the
 * stateless front), all on one PostgreSQL catalog; and `x node list|drain|undrain`.
 */
import os from "node:os";
import { parseArgs } from "node:util";
import {
  type ClusterNode,
  createLogger,
  DEFAULT_NODE_TIMEOUT_MS,
  DEFAULTS,
  LOG_LEVELS,
  type LogLevel,
  openStore,
  type RunningRole,
  requirePostgres,
  startApiRole,
  startPlatform,
  startProxyRole,
} from "@x/platform";
import { cleanupCommandFor } from "./cleanup.js";
import { consoleDistDir } from "./envd-dir.js";
import { type Io, processIo } from "./output/io.js";
import { table } from "./output/table.js";
import { serveConfig } from "./serve.js";
import { type StopSignal, stopSignal } from "./stop-signal.js";
import { parsing, usageError } from "./usage.js";

const NODE_HELP = `x node: run this host as a node of a cluster (sandboxes, warm pool, builds, volumes)

  x node [options]       run the node: every option of 'x serve', plus
    --name NAME          the node's name in the cluster (X_NODE_NAME, default the host name)
    --advertise HOST     where the api and proxies reach this node (X_ADVERTISE, default
                         --host, or the host name when that is 0.0.0.0)
    --cluster-secret S   shared by the cluster's nodes, for copying layers between them
                         (X_CLUSTER_SECRET, required)
    --max-sandboxes N    sandboxes it takes at most (X_MAX_SANDBOXES, default one per 64 MiB)
    --layer-store DIR    a directory every node mounts (NFS, say) where layers are kept too,
                         by digest, so a template outlives the nodes that hold it (X_LAYER_STORE)
    --database-url URL   the cluster's PostgreSQL (X_DATABASE_URL, required)
    --domain NAME        the sandbox domain the proxies serve (X_DOMAIN)
    --secrets-key-file F the key that encrypts teams' secrets: every node must be given the
                         same file, or a node cannot read what another sealed (X_SECRETS_KEY_FILE)
    --identity-key-file F
                         the key that signs sandboxes' identity tokens: the same file on every
                         node, so the key set any node publishes verifies all (X_IDENTITY_KEY_FILE)
    --identity-issuer URL
                         the tokens' iss: the address of the cluster's x api (X_IDENTITY_ISSUER)
    --metrics-token-file F
                         the bearer token the node's /metrics needs (X_METRICS_TOKEN_FILE)
    --allow-private-registry HOST[:PORT]|CIDR, --allow-private-webhooks HOST[:PORT]|CIDR
                         internal registries templates may pull from and internal hosts
                         webhooks may be sent to (as x serve's); give every node the same, since
                         any node builds and sends (X_ALLOW_PRIVATE_REGISTRIES, X_ALLOW_PRIVATE_WEBHOOKS)
  x node list            the cluster's nodes, their state and capacity
  x node drain NAME      no new sandboxes on NAME; its running ones are kept
  x node undrain NAME    NAME takes sandboxes again
`;

const API_HELP = `x api: the cluster's platform API (stateless: run any number behind one address)

  --port N            (X_PORT, default ${DEFAULTS.apiPort})
  --host ADDR         (X_HOST, default ${DEFAULTS.host})
  --database-url URL  the cluster's PostgreSQL (X_DATABASE_URL, required)
  --node-timeout S    a node silent this long is marked down and its sandboxes lost
                      (X_NODE_TIMEOUT, default ${DEFAULT_NODE_TIMEOUT_MS / 1000})
  --domain NAME       the sandboxes' domain, as 'x proxy' has it, for the web console at
                      /console/ (X_DOMAIN, default ${DEFAULTS.domain})
  --proxy-port N      the port browsers reach 'x proxy' on (X_PROXY_PORT, default ${DEFAULTS.proxyPort})
  --metrics-token-file FILE
                      a file holding the bearer token GET /metrics then needs (401 without it);
                      without one /metrics is anonymous (X_METRICS_TOKEN_FILE)
  --log-level L       debug, info, warn, error or silent (X_LOG_LEVEL, default info)

Teams' limits are the nodes': each node checks what it is sent against its own 'x serve'
limit flags (--max-cpu, --max-volumes, …) and 'x team limits'; give every node the same flags.
`;

const PROXY_HELP = `x proxy: the cluster's sandbox proxy (stateless: run any number behind the domain's address)

  --port N            (X_PORT, default ${DEFAULTS.proxyPort})
  --host ADDR         (X_HOST, default ${DEFAULTS.host})
  --database-url URL  the cluster's PostgreSQL (X_DATABASE_URL, required)
  --domain NAME       sandboxes are {port}-{id}.NAME (X_DOMAIN, default ${DEFAULTS.domain})
  --secrets-key-file FILE
                      the nodes' secrets key, for signed file URLs that name no sandbox (the
                      e2b client with E2B_SANDBOX_URL set): they are matched against the running
                      sandboxes' envd tokens, sealed with it; without it they are 400
                      (X_SECRETS_KEY_FILE)
  --log-level L       debug, info, warn, error or silent (X_LOG_LEVEL, default info)
`;

const NODE_FLAGS = ["name", "advertise", "cluster-secret", "max-sandboxes", "layer-store"] as const;

/** Splits `x node`'s own flags from those it shares with `x serve`. */
function nodeFlags(argv: string[]): { own: Record<string, string>; rest: string[] } {
  const own: Record<string, string> = {};
  const rest: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    const [flag, inline] = arg.startsWith("--") ? arg.slice(2).split(/=(.*)/s, 2) : [""];
    if ((NODE_FLAGS as readonly string[]).includes(flag!)) {
      const value = inline ?? argv[++i];
      if (value === undefined) throw new Error(`--${flag} needs a value`);
      own[flag!] = value;
    } else rest.push(arg);
  }
  return { own, rest };
}

/** A role's options; a mistake in them is a usage error (exit 2), found before anything starts. */
function roleOptions(
  command: string,
  argv: string[],
  defaultPort: number,
  extra: Record<string, { type: "string" }> = {},
) {
  return parsing(command, () => readRoleOptions(argv, defaultPort, extra));
}

function readRoleOptions(argv: string[], defaultPort: number, extra: Record<string, { type: "string" }>) {
  const { values } = parseArgs({
    args: argv,
    options: {
      port: { type: "string" },
      host: { type: "string" },
      "database-url": { type: "string" },
      "log-level": { type: "string" },
      help: { type: "boolean", short: "h", default: false },
      ...extra,
    },
    strict: true,
  });
  const env = process.env;
  const portText = values.port ?? env.X_PORT;
  const port = portText === undefined ? defaultPort : Number(portText);
  if (!Number.isInteger(port) || port < 0 || port > 65535)
    throw new Error(`--port must be a port number, got ${portText}`);
  const level = values["log-level"] ?? env.X_LOG_LEVEL ?? "info";
  if (!(LOG_LEVELS as readonly string[]).includes(level as string))
    throw new Error(`--log-level must be one of ${LOG_LEVELS.join(", ")}, got ${level}`);
  return {
    values: values as Record<string, string | boolean | undefined>,
    help: values.help === true,
    port,
    host: (values.host as string | undefined) ?? env.X_HOST ?? DEFAULTS.host,
    databaseUrl: (values["database-url"] as string | undefined) ?? env.X_DATABASE_URL,
    log: createLogger({ level: level as LogLevel }),
  };
}

/** Runs a role until SIGTERM or SIGINT (listened for since `stop` was made). */
async function runUntilStopped(
  role: RunningRole | { close(): Promise<void> },
  what: string,
  stop: StopSignal = stopSignal(),
): Promise<number> {
  await stop.requested;
  process.stdout.write(`x: ${what} shutting down\n`);
  await role.close();
  return 0;
}

export async function api(argv: string[], io: Io = processIo): Promise<number> {
  const o = roleOptions("x api", argv, DEFAULTS.apiPort, {
    "node-timeout": { type: "string" },
    domain: { type: "string" },
    "proxy-port": { type: "string" },
    "metrics-token-file": { type: "string" },
  });
  if (o.help) return (io.out(API_HELP), 0);
  const domain = (o.values.domain as string | undefined) ?? process.env.X_DOMAIN ?? DEFAULTS.domain;
  const { proxyPort, timeout, databaseUrl } = parsing("x api", () => {
    const proxyPortText = (o.values["proxy-port"] as string | undefined) ?? process.env.X_PROXY_PORT;
    const proxyPort = proxyPortText === undefined ? DEFAULTS.proxyPort : Number(proxyPortText);
    if (!Number.isInteger(proxyPort) || proxyPort < 1 || proxyPort > 65535)
      throw new Error(`--proxy-port must be a port number, got ${proxyPortText}`);
    const timeout = (o.values["node-timeout"] as string | undefined) ?? process.env.X_NODE_TIMEOUT;
    if (timeout !== undefined && !(Number(timeout) > 0))
      throw new Error(`--node-timeout must be a number of seconds, got ${timeout}`);
    return { proxyPort, timeout, databaseUrl: requirePostgres(o.databaseUrl, "api") };
  });
  const metricsTokenFile =
    (o.values["metrics-token-file"] as string | undefined) ?? process.env.X_METRICS_TOKEN_FILE;
  const role = await startApiRole(
    {
      databaseUrl,
      host: o.host,
      port: o.port,
      ...(timeout !== undefined ? { nodeTimeoutMs: Number(timeout) * 1000 } : {}),
      ...(metricsTokenFile !== undefined ? { metricsTokenFile } : {}),
      console: { distDir: consoleDistDir(), domain, proxyPort },
    },
    o.log,
  );
  io.out(`x: api ready on ${o.host}:${role.port}\n`);
  return runUntilStopped(role, "api");
}

export async function proxy(argv: string[], io: Io = processIo): Promise<number> {
  const o = roleOptions("x proxy", argv, DEFAULTS.proxyPort, {
    domain: { type: "string" },
    "secrets-key-file": { type: "string" },
  });
  const secretsKeyFile =
    (o.values["secrets-key-file"] as string | undefined) ?? process.env.X_SECRETS_KEY_FILE;
  if (o.help) return (io.out(PROXY_HELP), 0);
  const domain = (o.values.domain as string | undefined) ?? process.env.X_DOMAIN ?? DEFAULTS.domain;
  const databaseUrl = parsing("x proxy", () => requirePostgres(o.databaseUrl, "proxy"));
  const role = await startProxyRole(
    {
      databaseUrl,
      host: o.host,
      port: o.port,
      domain,
      ...(secretsKeyFile !== undefined ? { secretsKeyFile } : {}),
    },
    o.log,
  );
  io.out(`x: proxy ready on ${o.host}:${role.port} for *.${domain}\n`);
  return runUntilStopped(role, "proxy");
}

function describe(n: ClusterNode): string[] {
  const c = n.capacity;
  return [
    n.id,
    n.state,
    n.apiUrl,
    n.trafficUrl,
    `${c.sandboxes}/${c.maxSandboxes}`,
    `${c.memoryFreeMB} MB`,
    c.load.toFixed(2),
    Object.values(c.pool)
      .reduce((a, b) => a + b, 0)
      .toString(),
    n.heartbeatAt,
  ];
}

async function manage(command: string, argv: string[], io: Io): Promise<number> {
  const { values, positionals, databaseUrl } = parsing(`x node ${command}`, () => {
    const { values, positionals } = parseArgs({
      args: argv,
      options: { "database-url": { type: "string" }, json: { type: "boolean", default: false } },
      allowPositionals: true,
      strict: true,
    });
    if (command !== "list" && !positionals[0]) throw new Error("name the node (x node list shows them)");
    const url = requirePostgres(values["database-url"] ?? process.env.X_DATABASE_URL, `node ${command}`);
    return { values, positionals, databaseUrl: url };
  });
  const store = await openStore({ dataDir: "/nonexistent", databaseUrl });
  try {
    if (command === "list") {
      const nodes = await store.nodes.list();
      if (values.json) io.out(`${JSON.stringify(nodes, null, 2)}\n`);
      else
        io.out(
          table([
            ["NAME", "STATE", "API", "TRAFFIC", "SANDBOXES", "FREE MEMORY", "LOAD", "POOL", "LAST HEARD"],
            ...nodes.map(describe),
          ]),
        );
      return 0;
    }
    const name = positionals[0]!;
    if (!(await store.nodes.setState(name, command === "drain" ? "draining" : "ready"))) {
      io.err(`x node ${command}: no node '${name}' that is up (x node list shows them)\n`);
      return 1;
    }
    io.out(
      command === "drain"
        ? `node ${name} is draining: no new sandboxes go there; its running ones are kept\n`
        : `node ${name} takes sandboxes again\n`,
    );
    return 0;
  } finally {
    await store.close();
  }
}

export async function node(argv: string[], io: Io = processIo): Promise<number> {
  const [first, ...rest] = argv;
  if (first === "list" || first === "drain" || first === "undrain") return manage(first, rest, io);
  const { own, rest: serveArgs } = parsing("x node", () => nodeFlags(argv));
  // nodes serve no HTTPS of their own: the proxies are the sandbox domain's face
  if (!serveArgs.some((a) => a === "--tls-port" || a.startsWith("--tls-port=")))
    serveArgs.push("--tls-port", "off");
  const { config, help, logLevel, logFormat } = serveConfig(serveArgs, "x node");
  if (help) return (io.out(NODE_HELP), 0);
  const env = process.env;
  const secret = own["cluster-secret"] ?? env.X_CLUSTER_SECRET;
  if (!secret)
    throw usageError("x node", "it needs the cluster's secret: --cluster-secret S (X_CLUSTER_SECRET)");
  parsing("x node", () => requirePostgres(config.databaseUrl, "node"));
  const name = own.name ?? env.X_NODE_NAME ?? os.hostname();
  if (!/^[a-z0-9][a-z0-9.-]{0,62}$/i.test(name))
    throw usageError("x node", `--name must be a host-like name, got ${name}`);
  const advertise =
    own.advertise ??
    env.X_ADVERTISE ??
    (config.host === "0.0.0.0" || config.host === "::" ? os.hostname() : config.host);
  const maxText = own["max-sandboxes"] ?? env.X_MAX_SANDBOXES;
  if (maxText !== undefined && !/^[1-9]\d*$/.test(maxText))
    throw usageError("x node", `--max-sandboxes must be a whole number ≥ 1, got ${maxText}`);
  const layerStore = own["layer-store"] ?? env.X_LAYER_STORE;
  const stop = stopSignal();
  const platform = await startPlatform(
    {
      ...config,
      cluster: {
        nodeId: name,
        secret,
        advertise,
        ...(maxText ? { maxSandboxes: Number(maxText) } : {}),
        ...(layerStore ? { layerStore } : {}),
      },
    },
    {
      log: createLogger({ level: logLevel, ...(logFormat ? { format: logFormat } : {}) }),
      signal: stop.signal,
      cleanupCommand: cleanupCommandFor(config, name),
    },
  ).catch(stop.explain);
  io.out(
    `x: node ${name} ready — API on ${advertise}:${platform.apiPort}, sandbox traffic on ${advertise}:${platform.proxyPort}\n`,
  );
  return runUntilStopped(platform, `node ${name}`, stop);
}
