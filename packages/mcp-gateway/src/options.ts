import path from "node:path";

export const GATEWAY_NAME = "mcp-gateway";
export const GATEWAY_VERSION = "0.1.0";

/** Where the gateway serves and keeps its files; flags of `mcp-gateway` change them (tests do). */
export interface GatewayOptions {
  host: string;
  port: number;
  /** The token file (`.token`, what `sandbox.getMcpToken()` reads after a connect) and the pid file. */
  stateDir: string;
  /** What servers write (the memory server's graph), and where GitHub servers are cloned. */
  dataDir: string;
  /** The catalog's bundles, `<serversDir>/<name>/bundle.mjs`, and servers.json. */
  serversDir: string;
  logFile: string;
  /** How long the servers may take to start, all together, before the start fails. */
  startTimeoutMs: number;
}

/** The gateway's own script: the bundle the sandbox's node runs (gateway.cjs). */
export function gatewayScript(): string {
  return path.resolve(process.argv[1] ?? "gateway.cjs");
}

export function defaultOptions(): GatewayOptions {
  return {
    host: "0.0.0.0",
    port: 50005,
    stateDir: "/etc/mcp-gateway",
    dataDir: "/var/lib/mcp-gateway",
    serversDir: path.join(path.dirname(gatewayScript()), "servers"),
    logFile: "/var/log/mcp-gateway.log",
    startTimeoutMs: 45_000,
  };
}

export const tokenFile = (o: GatewayOptions) => path.join(o.stateDir, ".token");
export const pidFile = (o: GatewayOptions) => path.join(o.stateDir, "gateway.pid");
