import { runCommand } from "./commands.js";
import { type EnvdTarget, envdClient } from "./envd-http.js";

/** Who a sandbox is, as e2b's envd tells its processes (`E2B_SANDBOX_ID`, …). */
export interface SandboxIdentity {
  sandboxId: string;
  templateId: string;
  teamId: string;
}

export interface EnvdInit {
  envVars: Record<string, string>;
  identity: SandboxIdentity;
  /** The sandbox's own token, when envd runs with another one (a warm pool member's, an image's). */
  accessToken?: string;
}

/**
 * Hands envd the sandbox's environment and identity through its /init (and its own access
 * token when it differs from the one envd runs with). A pool member or a restored memory image
 * would otherwise go on with the identity it was booted with.
 */
export async function initEnvd(target: EnvdTarget, init: EnvdInit): Promise<void> {
  const rotate = init.accessToken !== undefined && init.accessToken !== target.accessToken;
  const { error, response } = await envdClient(target).http.POST("/init", {
    body: {
      envVars: {
        ...init.envVars,
        E2B_SANDBOX_ID: init.identity.sandboxId,
        E2B_TEMPLATE_ID: init.identity.templateId,
        E2B_TEAM_ID: init.identity.teamId,
      },
      timestamp: new Date().toISOString(),
      ...(rotate ? { accessToken: init.accessToken } : {}),
    },
  });
  if (!response.ok) throw new Error(`envd /init answered ${response.status}: ${JSON.stringify(error)}`);
}

/**
 * Pays a pool member's first-use costs while nobody waits: an /init that changes nothing (its
 * identity is the hostname it already has, and the create's /init follows) and a login shell,
 * so envd's handlers are compiled and the shell's files are cached before the first create.
 */
export async function warmUpEnvd(target: EnvdTarget, user: string): Promise<void> {
  const { response } = await envdClient(target).http.POST("/init", { body: {} });
  if (!response.ok) throw new Error(`envd /init answered ${response.status} while warming up`);
  await runCommand(target, { cmd: "exec /bin/bash -l -c true", user });
}
