import { sandbox } from "./commands/sandbox.js";
import { secret } from "./commands/secret.js";
import { snapshot } from "./commands/snapshot.js";
import { template } from "./commands/template.js";
import { volume } from "./commands/volume.js";
import { webhook } from "./commands/webhook.js";
import { CliError, explain } from "./connection.js";
import { type Io, processIo } from "./output/io.js";
import { isParseArgsError, USAGE_EXIT, usageError } from "./usage.js";

export { CliError } from "./connection.js";
export type { Io } from "./output/io.js";

const USAGE = `usage: x <command> [options]

run the platform:
  serve     run the platform in this process (x serve --help)
  keys      create, list and revoke API keys (x keys --help)
  team      teams, their limits and first keys (x team --help)
  cleanup   remove what a platform killed without stopping left (x cleanup --help)

run a cluster (one PostgreSQL catalog; see deploy/README.md):
  node      a host of sandboxes; list, drain and undrain nodes (x node --help)
  api       the cluster's platform API, stateless (x api --help)
  proxy     the cluster's sandbox proxy, stateless (x proxy --help)

use it (over HTTP, like any client; X_API_URL, X_PROXY_URL and X_API_KEY say where and who):
  sandbox   create, list, inspect, pause, resume and kill sandboxes; exec and shell in them
  template  build templates from a Dockerfile-like file; list, get, tag and delete them
  snapshot  snapshot sandboxes and list the snapshots
  volume    persistent volumes: create, list, delete; list, read and write their files
  secret    secrets for sandboxes' outbound request headers: create, update, list, delete
  webhook   sandbox lifecycle webhooks: create, list, delete; their delivery log

'x COMMAND --help' for each.
`;

async function dispatch(command: string | undefined, rest: string[], io: Io): Promise<number> {
  switch (command) {
    // the platform itself is loaded only by the commands that run it
    case "serve":
      return (await import("./serve.js")).serve(rest);
    case "cleanup":
      return (await import("./cleanup.js")).cleanup(rest, io);
    case "keys":
      return (await import("./keys.js")).keys(rest, io);
    case "team":
    case "teams":
      return (await import("./teams.js")).team(rest, io);
    case "node":
      return (await import("./cluster.js")).node(rest, io);
    case "api":
      return (await import("./cluster.js")).api(rest, io);
    case "proxy":
      return (await import("./cluster.js")).proxy(rest, io);
    case "sandbox":
    case "sandboxes":
      return sandbox(rest, io);
    case "template":
    case "templates":
      return template(rest, io);
    case "snapshot":
    case "snapshots":
      return snapshot(rest, io);
    case "volume":
    case "volumes":
      return volume(rest, io);
    case "secret":
    case "secrets":
      return secret(rest, io);
    case "webhook":
    case "webhooks":
      return webhook(rest, io);
    case undefined:
    case "help":
    case "--help":
    case "-h":
      (command === undefined ? io.err : io.out)(USAGE);
      return command === undefined ? USAGE_EXIT : 0;
    default:
      io.err(`x: unknown command '${command}'\n${USAGE}`);
      return USAGE_EXIT;
  }
}

/** The x command; returns the process exit code. Errors meant for the user are printed, not thrown. */
export async function main(argv: string[], io: Io = processIo): Promise<number> {
  const [command, ...rest] = argv;
  try {
    return await dispatch(command, rest, io);
  } catch (err) {
    // a flag no command knows is a usage mistake wherever it was parsed
    const failure = isParseArgsError(err) ? usageError(`x ${command}`, (err as Error).message) : err;
    if (failure instanceof CliError) {
      io.err(`${failure.message}\n`);
      return failure.exitCode;
    }
    if (["sandbox", "template", "snapshot", "volume", "secret", "webhook"].includes(command ?? "")) {
      io.err(`x ${command}: ${explain(err)}\n`);
      return 1;
    }
    throw err;
  }
}
