import { chmod, mkdir, rm, writeFile } from "node:fs/promises";
import type { Server as HttpServer } from "node:http";
import type { ServerPlan } from "./config.js";
import { Gateway } from "./gateway.js";
import { createMcpHttpServer, MCP_PATH } from "./http.js";
import type { Log } from "./log.js";
import { type GatewayOptions, pidFile, tokenFile } from "./options.js";
import { StartError } from "./plan.js";
import { Upstream } from "./upstream.js";

export interface Serving {
  port: number;
  servers: string[];
  close(): Promise<void>;
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
