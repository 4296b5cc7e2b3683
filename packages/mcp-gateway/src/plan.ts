import { existsSync } from "node:fs";
import { ConfigError, planServers, type ServerPlan } from "./config.js";
import type { GatewayOptions } from "./options.js";

/** A failure to start that the caller is shown as it is (no stack): what to fix. */
export class StartError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "StartError";
  }
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
