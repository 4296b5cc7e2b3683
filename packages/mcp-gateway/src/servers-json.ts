import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import type { GatewayOptions } from "./options.js";

/** servers.json beside the bundles: what the build put in the image. */
export interface Installed {
  title: string;
  package: string;
  version: string;
}

export function installed(o: GatewayOptions): Record<string, Installed> {
  const file = path.join(o.serversDir, "servers.json");
  return existsSync(file) ? (JSON.parse(readFileSync(file, "utf8")) as Record<string, Installed>) : {};
}
