import { access } from "node:fs/promises";
import type { ContainmentSettings } from "./containment/containment.js";
import { dropSupplementaryGroups } from "./process/launch.js";
import { EnvdServer } from "./server.js";

/**
 * envd's entry point. Settings come from the environment so the orchestrator can pass them
 * without a command line that `ps` would show:
 *   ENVD_PORT (49983), ENVD_ACCESS_TOKEN, ENVD_DEFAULT_USER (user), ENVD_DEFAULT_WORKDIR,
 *   ENVD_RUN_DIR (/run/e2b; empty: no identity files are written there),
 *   ENVD_SUDO=1 (serve the `sudo` stand-in of a sandbox where setuid cannot work),
 *   ENVD_MEMORY_LIMIT_MB, ENVD_MEMORY_WATCHDOG, ENVD_PROCESS_LIMIT, ENVD_PROCESS_RLIMIT,
 *   ENVD_OOM_SCORE_ADJ (containment: see containment/containment.ts; none set outside a sandbox).
 * SIGUSR1 quiesces (closes every socket before a checkpoint), SIGUSR2 wakes it again.
 */
function containmentSettings(env: NodeJS.ProcessEnv): ContainmentSettings | undefined {
  const number = (name: string) => (env[name] ? Number(env[name]) : undefined);
  const memoryMB = number("ENVD_MEMORY_LIMIT_MB");
  const settings: ContainmentSettings = {
    memoryLimitBytes: memoryMB ? memoryMB * 2 ** 20 : undefined,
    watchMemory: env.ENVD_MEMORY_WATCHDOG === "1" || undefined,
    processLimit: number("ENVD_PROCESS_LIMIT"),
    limitAccounts: env.ENVD_PROCESS_RLIMIT === "1" || undefined,
    oomScoreAdj: number("ENVD_OOM_SCORE_ADJ"),
  };
  return Object.values(settings).some((v) => v !== undefined) ? settings : undefined;
}

async function main(): Promise<void> {
  // stdout and stderr are the console log, which can be full: Node's own warnings written there
  // must not end envd (its log lines go around these streams, see context.ts)
  process.stdout.on("error", () => undefined);
  process.stderr.on("error", () => undefined);
  // libuv creates its thread pool at the first call that uses it, and aborts the process when
  // a thread cannot be created: under a fork bomb or with the sandbox's memory used up, envd's
  // first file upload would end envd. Most of envd's file calls are synchronous (sync-fs.ts),
  // so that first use could come at any time: start the pool now, while the sandbox is fresh.
  await access("/");
  dropSupplementaryGroups();
  const env = process.env;
  const accessToken = env.ENVD_ACCESS_TOKEN;
  delete env.ENVD_ACCESS_TOKEN;
  const server = new EnvdServer({
    port: Number(env.ENVD_PORT ?? 49983),
    host: env.ENVD_HOST,
    sudo: env.ENVD_SUDO === "1",
    containment: containmentSettings(env),
    state: {
      accessToken,
      defaultUser: env.ENVD_DEFAULT_USER ?? "user",
      defaultWorkdir: env.ENVD_DEFAULT_WORKDIR,
      runDir: env.ENVD_RUN_DIR ?? "/run/e2b",
    },
  });
  const { log } = server.context;
  process.on("SIGUSR1", () => {
    server.quiesce().then(
      () => log("info", "quiesced"),
      (err) => log("error", "quiesce failed", { err: String(err) }),
    );
  });
  process.on("SIGUSR2", () => {
    server.wake().then(
      () => log("info", "woken", { port: server.port }),
      (err) => log("error", "wake failed", { err: String(err) }),
    );
  });
  const stop = () => {
    server.close().finally(() => process.exit(0));
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  await server.listen();
  log("info", "envd ready", {
    port: server.port,
    version: server.context.state.version,
    startupMs: Math.round(performance.now()),
  });
}

main().catch((err) => {
  process.stderr.write(`envd failed to start: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
