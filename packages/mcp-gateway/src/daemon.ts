import { spawn } from "node:child_process";
import { closeSync, mkdirSync, openSync } from "node:fs";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { createLog } from "./log.js";
import { type GatewayOptions, gatewayScript, pidFile } from "./options.js";
import { plan, StartError } from "./plan.js";

/**
 * The servers, the MCP SDK and the HTTP endpoint, loaded only by the processes that serve:
 * the command that starts the daemon checks the config and returns without them.
 */
const serving = () => import("./serve.js");

/** The internal command the daemon runs as; it takes its config over IPC, never in argv. */
export const DAEMON_COMMAND = "__daemon";

type Outcome = { ready: true; port: number; servers: string[] } | { error: string };

interface DaemonRequest {
  config: string;
  options: GatewayOptions;
}

function tokenFromEnv(): string {
  const token = process.env.GATEWAY_ACCESS_TOKEN ?? "";
  if (token.trim() === "") {
    throw new StartError("GATEWAY_ACCESS_TOKEN is not set: the gateway serves no one without a token");
  }
  return token;
}

/**
 * `mcp-gateway --config '<json>'`: checks the config, starts the daemon in a session of its
 * own (so the command that started it can end) and returns once the daemon serves, 0, or
 * with what went wrong, 1. The public client runs this in the foreground and waits for it.
 */
export async function startDaemon(config: string, o: GatewayOptions): Promise<number> {
  try {
    tokenFromEnv();
    const plans = plan(config, o);
    mkdirSync(path.dirname(o.logFile), { recursive: true });
    const logFd = openSync(o.logFile, "a", 0o600);
    const child = spawn(process.execPath, [gatewayScript(), DAEMON_COMMAND], {
      detached: true,
      stdio: ["ignore", logFd, logFd, "ipc"],
      env: process.env,
    });
    closeSync(logFd);
    const outcome = await new Promise<Outcome>((resolve) => {
      const timer = setTimeout(
        () => resolve({ error: `the servers did not start within ${Math.round(o.startTimeoutMs / 1000)} s` }),
        o.startTimeoutMs + 5000,
      );
      const done = (outcome: Outcome) => {
        clearTimeout(timer);
        resolve(outcome);
      };
      child.once("message", (m) => done(m as Outcome));
      child.once("error", (err) => done({ error: `the gateway could not be started: ${err.message}` }));
      child.once("exit", (code, signal) =>
        done({ error: `the gateway ended (${signal ?? `exit ${code}`}) before it served: see ${o.logFile}` }),
      );
      child.send({ config, options: o } satisfies DaemonRequest);
    });
    if ("error" in outcome) {
      child.kill("SIGKILL");
      throw new StartError(outcome.error);
    }
    child.disconnect();
    child.unref();
    process.stdout.write(
      `mcp-gateway: serving ${plans.map((p) => p.key).join(", ")} on http://${o.host}:${outcome.port}/mcp ` +
        `(pid ${child.pid}, log ${o.logFile})\n`,
    );
    return 0;
  } catch (err) {
    if (!(err instanceof StartError)) throw err;
    process.stderr.write(`mcp-gateway: ${err.message}\n`);
    return 1;
  }
}

/** The daemon: serves until SIGTERM or SIGINT. */
export function runDaemon(): void {
  const log = createLog();
  // loaded while the config is on its way
  const loaded = serving();
  process.once("message", (message) => {
    const { config, options } = message as DaemonRequest;
    (async () => {
      const { serve } = await loaded;
      const running = await serve(plan(config, options), tokenFromEnv(), options, log);
      stopOnSignals(() => running.close());
      process.send?.({ ready: true, port: running.port, servers: running.servers } satisfies Outcome);
      process.disconnect?.();
    })().catch((err: Error) => {
      log.info(`start failed: ${err.message}`);
      const outcome: Outcome = {
        error: err instanceof StartError ? err.message : (err.stack ?? err.message),
      };
      process.send?.(outcome, undefined, {}, () => process.exit(1));
    });
  });
}

/** `--foreground`: serves in this process, for a look at what the daemon would do. */
export async function runForeground(config: string, o: GatewayOptions): Promise<number> {
  try {
    const { serve } = await serving();
    const running = await serve(plan(config, o), tokenFromEnv(), o, createLog());
    process.stdout.write(
      `mcp-gateway: serving ${running.servers.join(", ")} on http://${o.host}:${running.port}/mcp\n`,
    );
    stopOnSignals(() => running.close());
    return await new Promise<number>(() => undefined);
  } catch (err) {
    if (!(err instanceof StartError)) throw err;
    process.stderr.write(`mcp-gateway: ${err.message}\n`);
    return 1;
  }
}

function stopOnSignals(close: () => Promise<void>): void {
  const stop = () => {
    close().finally(() => process.exit(0));
  };
  process.once("SIGTERM", stop);
  process.once("SIGINT", stop);
}

/** `mcp-gateway stop`: ends the running gateway (the one its pid file names). */
export async function stopDaemon(o: GatewayOptions): Promise<number> {
  const pid = Number((await readFile(pidFile(o), "utf8").catch(() => "")).trim());
  if (!Number.isInteger(pid) || pid <= 0) {
    process.stderr.write(`mcp-gateway: no gateway runs here (${pidFile(o)} is missing)\n`);
    return 1;
  }
  const alive = () => {
    try {
      process.kill(pid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) {
    process.stderr.write(`mcp-gateway: the gateway of ${pidFile(o)} (pid ${pid}) is not running\n`);
    return 1;
  }
  process.kill(pid, "SIGTERM");
  for (let i = 0; i < 100 && alive(); i++) await new Promise((r) => setTimeout(r, 50));
  if (alive()) process.kill(pid, "SIGKILL");
  process.stdout.write(`mcp-gateway: stopped (pid ${pid})\n`);
  return 0;
}
