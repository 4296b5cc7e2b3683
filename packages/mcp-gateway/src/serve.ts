import { existsSync } from "node:fs";
import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import type { Server as HttpServer } from "node:http";
import { ConfigError, planServers, type ServerPlan } from "./config.js";
import { Gateway } from "./gateway.js";
import { createMcpHttpServer, MCP_PATH } from "./http.js";
import type { Log } from "./log.js";
import { type GatewayOptions, pidFile, tokenFile } from "./options.js";
import { Upstream } from "./upstream.js";

/** A failure to start that the caller is shown as it is (no stack): what to fix. */
export class StartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartError";
  }
}

export interface Serving {
  port: number;
  servers: string[];
  close(): Promise<void>;
}

/** The config's servers, checked, with the catalog's bundles present in this image. */
export function plan(configJson: string, o: GatewayOptions): ServerPlan[] {
  let config: unknown;
  try {
    config = JSON.parse(configJson);
  } catch (err) {
    throw new StartError(`--config is not JSON: ${(err as Error).message}`);
  }
  let plans: ServerPlan[];
  try {
    plans = planServers(config, { nodePath: process.execPath, serversDir: o.serversDir, dataDir: o.dataDir });
  } catch (err) {
    if (err instanceof ConfigError) throw new StartError(err.message);
    throw err;
  }
  const missing = plans.filter((p) => p.command === process.execPath && !existsSync(p.args[0]!));
  if (missing.length > 0) {
    throw new StartError(
      `${missing.map((p) => p.key).join(", ")} ${missing.length === 1 ? "is" : "are"} not installed here ` +
        `(${missing.map((p) => p.args[0]).join(", ")} missing): start from the mcp-gateway template`,
    );
  }
  return plans;
}

function listen(server: HttpServer, o: GatewayOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => {
      reject(
        new StartError(
          err.code === "EADDRINUSE"
            ? `port ${o.port} is taken: is a gateway already running? (its pid is in ${pidFile(o)}; 'mcp-gateway stop' ends it)`
            : `cannot listen on ${o.host}:${o.port}: ${err.message}`,
        ),
      );
    });
    server.listen(o.port, o.host, () => {
      const address = server.address();
      resolve(typeof address === "object" && address ? address.port : o.port);
    });
  });
}

/**
 * Starts every server of the config at once, then serves them on `/mcp` and writes the token
 * file (root only) and the pid file. Any server that fails to start fails the whole start,
 * with what each failed one said; nothing is left running then.
 */
export async function serve(
  plans: ServerPlan[],
  token: string,
  o: GatewayOptions,
  log: Log,
): Promise<Serving> {
  await mkdir(o.dataDir, { recursive: true, mode: 0o700 });
  const upstreams = plans.map((p) => new Upstream(p, log));
  const started = await Promise.allSettled(upstreams.map((u) => u.start(o.startTimeoutMs)));
  const failures = started.flatMap((r) => (r.status === "rejected" ? [(r.reason as Error).message] : []));
  if (failures.length > 0) {
    await Promise.all(upstreams.map((u) => u.close()));
    throw new StartError(failures.join("\n"));
  }
  const gateway = new Gateway(upstreams, log);
  const http = createMcpHttpServer(gateway, token, log);
  let port: number;
  try {
    port = await listen(http, o);
    await mkdir(o.stateDir, { recursive: true, mode: 0o700 });
    await chmod(o.stateDir, 0o700);
    await writeFile(tokenFile(o), token, { mode: 0o600 });
    await chmod(tokenFile(o), 0o600);
    await writeFile(pidFile(o), `${process.pid}\n`, { mode: 0o600 });
  } catch (err) {
    http.close();
    await gateway.close();
    if (err instanceof StartError) throw err;
    throw new StartError(
      `cannot write the gateway's files in ${o.stateDir}: ${(err as Error).message} (run it as root)`,
    );
  }
  log.info(`serving ${plans.map((p) => p.key).join(", ")} on http://${o.host}:${port}${MCP_PATH}`);
  return {
    port,
    servers: plans.map((p) => p.key),
    close: async () => {
      http.closeAllConnections();
      await new Promise<void>((resolve) => http.close(() => resolve()));
      await gateway.close();
      await rm(pidFile(o), { force: true });
    },
  };
}
