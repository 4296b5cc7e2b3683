import type { BuildRow, SandboxRow } from "../store/index.js";
import { runtimeSpecOf } from "../templates/build-spec.js";
import { envdFetch } from "../templates/envd-exec.js";
import { runStartCommand } from "../templates/start-command.js";

/** How long a template's start command may take to become ready when a sandbox starts. */
const START_READY_TIMEOUT_MS = 60_000;

/**
 * Hands the sandbox its environment variables through envd's /init; `currentToken` is the
 * token envd runs with when it is not the sandbox's own yet (a warm pool member's).
 */
export async function initEnvd(row: SandboxRow, address: string, currentToken?: string): Promise<void> {
  const envVars = {
    ...(JSON.parse(row.env_vars) as Record<string, string>),
    // who the sandbox is, as e2b's envd tells its processes (a pool member or a restored
    // memory image would otherwise go on with the identity it was booted with)
    E2B_SANDBOX_ID: row.id,
    E2B_TEMPLATE_ID: row.template_id,
    E2B_TEAM_ID: row.team_id,
  };
  const rotate = currentToken !== undefined && currentToken !== row.envd_access_token;
  const res = await envdFetch(`http://${address}:49983/init`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Access-Token": currentToken ?? row.envd_access_token,
    },
    body: JSON.stringify({
      envVars,
      timestamp: new Date().toISOString(),
      ...(rotate ? { accessToken: row.envd_access_token } : {}),
    }),
  });
  if (!res.ok) throw new Error(`envd /init answered ${res.status}: ${await res.text()}`);
}

/** A template's start command runs in each new sandbox; create returns once its ready command succeeds. */
export async function startTemplateCommand(row: SandboxRow, address: string, build: BuildRow): Promise<void> {
  const spec = runtimeSpecOf(build);
  if (!spec.startCmd) return;
  const { startCmd, readyCmd, user, workdir } = spec;
  // no envVars: envd has the sandbox's (template and request) since /init
  const target = { address, accessToken: row.envd_access_token };
  const timeoutMs = START_READY_TIMEOUT_MS;
  await runStartCommand(target, { startCmd, readyCmd, user, workdir }, { timeoutMs });
}
