import { dropSupplementaryGroups } from "./process/launch.js";
import { EnvdServer } from "./server.js";

/**
 * envd's entry point. Settings come from the environment so the orchestrator can pass them
 * without a command line that `ps` would show:
 *   ENVD_PORT (49983), ENVD_ACCESS_TOKEN, ENVD_DEFAULT_USER (user), ENVD_DEFAULT_WORKDIR,
 *   ENVD_RUN_DIR (/run/e2b; empty: no identity files are written there),
 *   ENVD_SUDO=1 (serve the `sudo` stand-in of a sandbox where setuid cannot work).
 * SIGUSR1 quiesces (closes every socket before a checkpoint), SIGUSR2 wakes it again.
 */
async function main(): Promise<void> {
  dropSupplementaryGroups();
  const env = process.env;
  const accessToken = env.ENVD_ACCESS_TOKEN;
  delete env.ENVD_ACCESS_TOKEN;
  const server = new EnvdServer({
    port: Number(env.ENVD_PORT ?? 49983),
    host: env.ENVD_HOST,
    sudo: env.ENVD_SUDO === "1",
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
