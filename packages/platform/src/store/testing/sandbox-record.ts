import { newSecret, nowIso } from "../../lib/ids.js";
import { OPEN_EGRESS, PUBLIC_INGRESS } from "../../model/network.js";
import type { Sandbox } from "../../model/sandbox.js";

/** A sandbox's record for tests that write the store directly: a small running one, open to the network. */
export function sandboxRecord(
  fields: Pick<Sandbox, "id" | "teamId" | "templateId"> & Partial<Sandbox>,
): Sandbox {
  const now = Date.now();
  return {
    buildId: "b",
    state: "running",
    runtime: "runc",
    startedAt: nowIso(new Date(now)),
    endAt: nowIso(new Date(now + 300_000)),
    cpuCount: 1,
    memoryMB: 512,
    diskSizeMB: 1024,
    metadata: {},
    envVars: {},
    envdAccessToken: newSecret(),
    egress: OPEN_EGRESS,
    ingress: PUBLIC_INGRESS,
    autoPause: false,
    autoPauseMemory: true,
    autoResume: false,
    volumeMounts: [],
    ...fields,
  };
}
