import { parseArgs } from "node:util";
import { cleanUpLeftovers, createLogger, DEFAULTS, type PlatformConfig } from "@x/platform";
import type { Io } from "./output/io.js";
import { STORE_HELP, STORE_OPTIONS, storeLocation } from "./store-location.js";
import { parsing } from "./usage.js";

const HELP = `usage: x cleanup [options]

Removes what a platform process left when it ended without stopping (SIGKILL, a crash, the
OOM killer): its warm-pool members, its helper processes, and its firewall table and network
leftovers when no sandbox is left for the next start to adopt. Users' sandboxes stay. x serve
and x node run it by themselves the moment they die that way; the next start does it too.
Refused while a platform runs on the same data directory and network prefix.

options (as the platform that ended was started with):
${STORE_HELP}  --network-prefix P  its network prefix (X_NETWORK_PREFIX, default ${DEFAULTS.networkPrefix})
  --network-cidr CIDR its sandbox networks (X_NETWORK_CIDR, default ${DEFAULTS.networkCidr})
  --name NAME         the node's name, for a node of a cluster (X_NODE_NAME)
`;

export async function cleanup(argv: string[], io: Io): Promise<number> {
  const { values } = parsing("x cleanup", () =>
    parseArgs({
      args: argv,
      options: {
        ...STORE_OPTIONS,
        "network-prefix": { type: "string" },
        "network-cidr": { type: "string" },
        name: { type: "string" },
        help: { type: "boolean", short: "h", default: false },
      },
      strict: true,
    }),
  );
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const env = process.env;
  const name = values.name ?? env.X_NODE_NAME;
  const report = await cleanUpLeftovers(
    {
      ...storeLocation(values),
      networkPrefix: values["network-prefix"] ?? env.X_NETWORK_PREFIX ?? DEFAULTS.networkPrefix,
      networkCidr: values["network-cidr"] ?? env.X_NETWORK_CIDR ?? DEFAULTS.networkCidr,
      allowInternal: [],
      ...(name ? { cluster: { nodeId: name, secret: "", advertise: "" } } : {}),
    },
    createLogger(),
  );
  io.out(
    `x cleanup: ended ${report.processes.length} helper process(es); warm-pool members removed; ${report.orphans.length} sandbox(es) no record kept removed; ${
      report.networkRemoved
        ? "no sandbox left: the firewall table and networks removed"
        : `${report.sandboxesKept} sandbox(es) kept for the next start, with their networks`
    }\n`,
  );
  return 0;
}

/** The `x cleanup` a watcher runs if this process dies without stopping (PlatformHooks.cleanupCommand). */
export function cleanupCommandFor(
  config: Pick<PlatformConfig, "dataDir" | "databaseUrl" | "networkPrefix" | "networkCidr">,
  nodeName?: string,
): { argv: string[]; env: NodeJS.ProcessEnv } {
  const bin = process.argv[1];
  return {
    argv: [
      process.execPath,
      ...(bin ? [bin] : []),
      "cleanup",
      "--data-dir",
      config.dataDir,
      "--network-prefix",
      config.networkPrefix,
      "--network-cidr",
      config.networkCidr,
      ...(nodeName ? ["--name", nodeName] : []),
    ],
    // the URL may hold a password: not on a command line others can read
    env: { ...process.env, ...(config.databaseUrl ? { X_DATABASE_URL: config.databaseUrl } : {}) },
  };
}
