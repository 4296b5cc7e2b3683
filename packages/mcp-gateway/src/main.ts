import { parseArgs } from "node:util";
import { CATALOG } from "./catalog.js";
import { DAEMON_COMMAND, runDaemon, runForeground, startDaemon, stopDaemon } from "./daemon.js";
import { defaultOptions, GATEWAY_VERSION, type GatewayOptions } from "./options.js";
import { installed } from "./servers-json.js";

const USAGE = `mcp-gateway: MCP servers behind one Streamable HTTP endpoint, with a bearer token

  mcp-gateway --config '<json>'   start the servers of the config and serve them on
                                  http://0.0.0.0:50005/mcp (Authorization: Bearer
                                  $GATEWAY_ACCESS_TOKEN); returns once it serves
  mcp-gateway pull NAME…          check that servers are installed here and start
  mcp-gateway list                the servers this gateway has, and their options
  mcp-gateway stop                end the running gateway

The config is an object of servers by name: a server of the list ({"memory": {}},
{"filesystem": {"paths": ["/home/user"]}}), "custom/<name>": {"runCmd": "…", "envs": {…},
"cwd": "/…", "installCmd": "…"} for a stdio server of your own, or E2B's
"github/<owner>/<repo>": {"runCmd": "…", "installCmd": "…"} (cloned at start when it is not
in /var/lib/mcp-gateway/github yet). Tools, prompts and resources are named <server>__<name>,
resource URIs <server>+<uri>.

Options: --port N (50005)  --host ADDR (0.0.0.0)  --foreground  --state-dir DIR (/etc/mcp-gateway)
         --data-dir DIR (/var/lib/mcp-gateway)  --log-file FILE (/var/log/mcp-gateway.log)
         --servers-dir DIR  --start-timeout SECONDS (45)
`;

function list(o: GatewayOptions, json: boolean): number {
  const inImage = installed(o);
  const rows = Object.entries(CATALOG).map(([name, s]) => ({
    name,
    title: s.title,
    package: s.package,
    version: inImage[name]?.version ?? null,
    options: s.options,
    required: s.required,
    ...(s.needs ? { needs: s.needs } : {}),
  }));
  if (json) {
    process.stdout.write(`${JSON.stringify(rows, null, 2)}\n`);
    return 0;
  }
  for (const r of rows) {
    const options = Object.keys(r.options).map((k) => (r.required.includes(k) ? k : `${k}?`));
    process.stdout.write(
      `${r.name.padEnd(20)} ${r.title} (${r.package} ${r.version ?? "not installed"})` +
        `${options.length ? ` options: ${options.join(", ")}` : ""}${r.needs ? `; needs ${r.needs}` : ""}\n`,
    );
  }
  return 0;
}

async function main(argv: string[]): Promise<number> {
  if (argv[0] === DAEMON_COMMAND) {
    runDaemon();
    return -1;
  }
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      config: { type: "string" },
      foreground: { type: "boolean" },
      port: { type: "string" },
      host: { type: "string" },
      "state-dir": { type: "string" },
      "data-dir": { type: "string" },
      "log-file": { type: "string" },
      "servers-dir": { type: "string" },
      "start-timeout": { type: "string" },
      json: { type: "boolean" },
      help: { type: "boolean", short: "h" },
      version: { type: "boolean" },
    },
  });
  const defaults = defaultOptions();
  const o: GatewayOptions = {
    host: values.host ?? defaults.host,
    port: values.port !== undefined ? Number(values.port) : defaults.port,
    stateDir: values["state-dir"] ?? defaults.stateDir,
    dataDir: values["data-dir"] ?? defaults.dataDir,
    logFile: values["log-file"] ?? defaults.logFile,
    serversDir: values["servers-dir"] ?? defaults.serversDir,
    startTimeoutMs:
      values["start-timeout"] !== undefined
        ? Number(values["start-timeout"]) * 1000
        : defaults.startTimeoutMs,
  };
  if (!Number.isInteger(o.port) || o.port < 0 || o.port > 65535)
    throw new UsageError(`--port ${values.port} is not a port`);
  if (!(o.startTimeoutMs > 0))
    throw new UsageError(`--start-timeout ${values["start-timeout"]} is not a number of seconds`);
  if (values.help) {
    process.stdout.write(USAGE);
    return 0;
  }
  if (values.version) {
    process.stdout.write(`${GATEWAY_VERSION}\n`);
    return 0;
  }
  const [command, ...names] = positionals;
  if (command === "pull") return (await import("./pull.js")).pull(names, o);
  if (command === "list") return list(o, values.json ?? false);
  if (command === "stop") return stopDaemon(o);
  if (command !== undefined) throw new UsageError(`'${command}' is not a command`);
  if (values.config === undefined) throw new UsageError("--config '<json>' names the servers to start");
  return values.foreground ? runForeground(values.config, o) : startDaemon(values.config, o);
}

class UsageError extends Error {}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exitCode = code;
  },
  (err: unknown) => {
    if (err instanceof UsageError || (err as { code?: string }).code?.startsWith("ERR_PARSE_ARGS")) {
      process.stderr.write(`mcp-gateway: ${(err as Error).message}\n\n${USAGE}`);
      process.exitCode = 2;
      return;
    }
    process.stderr.write(`mcp-gateway: ${(err as Error).stack ?? err}\n`);
    process.exitCode = 1;
  },
);
