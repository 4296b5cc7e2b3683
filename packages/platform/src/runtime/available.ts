import path from "node:path";
import type { ContainerRuntime, RuntimeName } from "./container-runtime.js";
import { createRuntime } from "./create-runtime.js";

/** The runtimes installed on this host (gVisor first), each keeping its state under `dataDir`. */
export async function availableRuntimes(dataDir: string): Promise<Map<RuntimeName, ContainerRuntime>> {
  const runtimes = new Map<RuntimeName, ContainerRuntime>();
  const problems: string[] = [];
  for (const name of ["runsc", "runc"] as const) {
    try {
      runtimes.set(name, await createRuntime(name, { stateDir: path.join(dataDir, "runtime", name) }));
    } catch (err) {
      problems.push(err instanceof Error ? err.message : String(err));
    }
  }
  if (runtimes.size === 0) {
    throw new Error(`no sandbox runtime found: ${problems.join("; ")} (apt-get install runsc runc)`);
  }
  return runtimes;
}

/**
 * The runtime of sandboxes that ask for none: the configured one, else gVisor when it is
 * installed, else runc. Fails when the one chosen is not installed, or is not one of the
 * runtimes tenants may have (a create that asks for none would get it all the same).
 */
export function chooseDefaultRuntime(
  runtimes: ReadonlyMap<RuntimeName, ContainerRuntime>,
  configured?: RuntimeName,
  tenantRuntimes?: readonly RuntimeName[],
): RuntimeName {
  const name = configured ?? (runtimes.has("runsc") ? "runsc" : "runc");
  if (!runtimes.has(name)) throw new Error(`default runtime ${name} is not installed`);
  if (tenantRuntimes && !tenantRuntimes.includes(name)) {
    throw new Error(
      `default runtime ${name} is not one tenants may use (tenant runtimes: ${tenantRuntimes.join(", ") || "none"})`,
    );
  }
  return name;
}
