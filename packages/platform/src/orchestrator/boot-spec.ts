import path from "node:path";
import { OPEN_EGRESS } from "../model/network.js";
import type { RuntimeName, Sandbox } from "../model/sandbox.js";
import { type Build, runtimeSpecOf } from "../model/template.js";
import type { BootSpec } from "../sandbox/sandbox-host.js";

/** How a sandbox of `build` boots before a create's own settings: what a warm pool member gets. */
export function buildBootSpec(
  dataDir: string,
  build: Build,
  id: string,
  runtime: RuntimeName,
  accessToken: string,
): BootSpec {
  const spec = runtimeSpecOf(build);
  return {
    id,
    runtime,
    lowers: build.layers.map((l) => path.resolve(dataDir, l)),
    cpuCount: build.cpuCount,
    memoryMB: build.memoryMB,
    diskSizeMB: build.diskSizeMB,
    // open as in a create; the sandbox that claims it applies its own policy
    egress: OPEN_EGRESS,
    envdAccessToken: accessToken,
    defaultUser: spec.user,
    defaultWorkdir: spec.workdir,
  };
}

/** How this sandbox boots: its build's layers with its own limits, network setting and token. */
export function sandboxBootSpec(dataDir: string, sandbox: Sandbox, build: Build): BootSpec {
  return {
    ...buildBootSpec(dataDir, build, sandbox.id, sandbox.runtime, sandbox.envdAccessToken),
    cpuCount: sandbox.cpuCount,
    memoryMB: sandbox.memoryMB,
    diskSizeMB: sandbox.diskSizeMB,
    egress: sandbox.egress,
    volumes: sandbox.volumeMounts.map((m) => ({ volumeId: m.volumeId, path: m.path })),
  };
}
