import type { Schemas } from "@x/platform-client";
import type { Sandbox } from "../../model/sandbox.js";

/** JSON shapes of openapi.yaml built from the model's sandboxes. */

export interface PresentOptions {
  /** Domain sandboxes are reached under: `{port}-{sandboxID}.{domain}`. */
  domain: string;
  envdVersion: string;
}

export function presentSandbox(s: Sandbox, opts: PresentOptions): Schemas["Sandbox"] {
  return {
    sandboxID: s.id,
    templateID: s.templateId,
    ...(s.alias ? { alias: s.alias } : {}),
    clientID: s.nodeId ?? "local",
    envdVersion: opts.envdVersion,
    envdAccessToken: s.envdAccessToken,
    trafficAccessToken: s.trafficAccessToken ?? null,
    domain: opts.domain,
  };
}

export function presentListedSandbox(s: Sandbox, opts: PresentOptions): Schemas["ListedSandbox"] {
  return {
    sandboxID: s.id,
    templateID: s.templateId,
    ...(s.alias ? { alias: s.alias } : {}),
    clientID: s.nodeId ?? "local",
    startedAt: s.startedAt,
    endAt: s.endAt,
    cpuCount: s.cpuCount,
    memoryMB: s.memoryMB,
    diskSizeMB: s.diskSizeMB,
    envdVersion: opts.envdVersion,
    metadata: s.metadata,
    // a starting sandbox is shown running: creates answer once it is
    state: s.state === "paused" || s.state === "error" || s.state === "lost" ? s.state : "running",
    ...(s.pauseKind && s.state === "paused" ? { pauseKind: s.pauseKind } : {}),
    ...((s.state === "error" || s.state === "lost") && s.reason ? { reason: s.reason } : {}),
    runtime: s.runtime,
    volumeMounts: s.volumeMounts.map((m) => ({ name: m.name, path: m.path })),
  };
}

export function presentSandboxDetail(s: Sandbox, opts: PresentOptions): Schemas["SandboxDetail"] {
  return {
    ...presentListedSandbox(s, opts),
    envdAccessToken: s.envdAccessToken,
    domain: opts.domain,
    allowInternetAccess: s.egress.allowInternetAccess ?? null,
    network: {
      ...(s.egress.allowOut.length > 0 ? { allowOut: s.egress.allowOut } : {}),
      ...(s.egress.denyOut.length > 0 ? { denyOut: s.egress.denyOut } : {}),
      ...(s.egress.rules ? { rules: s.egress.rules } : {}),
      // never the password
      egressProxy: s.egress.egressProxy
        ? {
            address: s.egress.egressProxy.address,
            ...(s.egress.egressProxy.username !== undefined
              ? { username: s.egress.egressProxy.username }
              : {}),
          }
        : null,
      allowPublicTraffic: s.ingress.allowPublicTraffic,
      ...(s.ingress.maskRequestHost !== undefined ? { maskRequestHost: s.ingress.maskRequestHost } : {}),
      ...(s.ingress.httpsPorts.length > 0 ? { httpsPorts: s.ingress.httpsPorts } : {}),
    },
    lifecycle: { onTimeout: s.autoPause ? "pause" : "kill", autoResume: s.autoResume },
  };
}
