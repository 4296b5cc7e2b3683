import type { SandboxRow, Team } from "../../store/index.js";

/** JSON shapes of openapi.yaml built from store rows. */

export function parseJsonObject(text: string | null): Record<string, string> {
  return text ? (JSON.parse(text) as Record<string, string>) : {};
}

export interface PresentOptions {
  /** Domain sandboxes are reached under: `{port}-{sandboxID}.{domain}`. */
  domain: string;
  envdVersion: string;
}

export function presentSandbox(row: SandboxRow, opts: PresentOptions) {
  return {
    sandboxID: row.id,
    templateID: row.template_id,
    ...(row.alias ? { alias: row.alias } : {}),
    clientID: "local",
    envdVersion: opts.envdVersion,
    envdAccessToken: row.envd_access_token,
    trafficAccessToken: null,
    domain: opts.domain,
  };
}

function stateOf(row: SandboxRow): "running" | "paused" {
  return row.state === "paused" ? "paused" : "running";
}

export function presentListedSandbox(row: SandboxRow, opts: PresentOptions) {
  return {
    sandboxID: row.id,
    templateID: row.template_id,
    ...(row.alias ? { alias: row.alias } : {}),
    clientID: "local",
    startedAt: row.started_at,
    endAt: row.end_at,
    cpuCount: row.cpu_count,
    memoryMB: row.memory_mb,
    diskSizeMB: row.disk_size_mb,
    envdVersion: opts.envdVersion,
    metadata: parseJsonObject(row.metadata),
    state: stateOf(row),
    ...(row.pause_kind && row.state === "paused" ? { pauseKind: row.pause_kind } : {}),
  };
}

export function presentSandboxDetail(row: SandboxRow, opts: PresentOptions) {
  return {
    ...presentListedSandbox(row, opts),
    envdAccessToken: row.envd_access_token,
    domain: opts.domain,
    allowInternetAccess: row.allow_internet === 1,
    lifecycle: { onTimeout: row.auto_pause ? "pause" : "kill", autoResume: row.auto_resume === 1 },
  };
}

/** A team sees its own sandboxes only; another team's id answers like an unknown one. */
export function ownedBy(row: SandboxRow | undefined, team: Team): row is SandboxRow {
  return row !== undefined && row.team_id === team.id && row.state !== "killed";
}
