import { randomBytes } from "node:crypto";
import { runCommand } from "../agent/commands.js";
import type { EnvdTarget } from "../agent/envd-http.js";
import { newSecret } from "../lib/ids.js";
import { OPEN_EGRESS } from "../model/network.js";
import type { RuntimeName } from "../model/sandbox.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";

export interface BuildSandboxSpec {
  host: SandboxHost;
  runtime: RuntimeName;
  /** Host paths of the layers to boot from, topmost first. */
  lowers: string[];
  cpuCount: number;
  memoryMB: number;
  user: string;
  workdir?: string;
}

/**
 * Boots a throwaway sandbox for a build step (steps may fetch packages, so it has internet),
 * runs `fn` against its envd and removes it again. With `keepUpper`, the sandbox is stopped
 * first and its writable layer (the step's changes) handed over before the rest is removed.
 */
export async function withBuildSandbox<T>(
  spec: BuildSandboxSpec,
  fn: (target: EnvdTarget) => Promise<T>,
  keepUpper?: (upperDir: string) => Promise<void>,
): Promise<T> {
  // a distinct first letter keeps build sandboxes apart from user sandboxes (`i…`)
  const id = `b${randomBytes(10).toString("hex")}`;
  const ref = { id, runtime: spec.runtime };
  const target = { address: "", accessToken: newSecret() };
  try {
    target.address = await spec.host.boot({
      id,
      runtime: spec.runtime,
      lowers: spec.lowers,
      cpuCount: spec.cpuCount,
      memoryMB: spec.memoryMB,
      egress: OPEN_EGRESS,
      envdAccessToken: target.accessToken,
      defaultUser: spec.user,
      defaultWorkdir: spec.workdir,
      withoutEgressCa: true,
    });
    const result = await fn(target);
    if (keepUpper) {
      // gVisor keeps written file data in its own memory until synced; flush it to the layer
      await runCommand(target, { cmd: "sync", user: "root" });
      await spec.host.stop(ref);
      await keepUpper(spec.host.paths(id).upper);
    }
    return result;
  } finally {
    await spec.host.destroy(ref);
  }
}
