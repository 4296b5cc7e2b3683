import type { SandboxAgentPort } from "../agent/agent-port.js";
import { type Build, runtimeSpecOf } from "../model/template.js";

/** How long a template's start command may take to become ready when a sandbox starts. */
const START_READY_TIMEOUT_MS = 60_000;

/**
 * A template's start command runs in each new sandbox, and the sandbox is ready once its ready
 * command succeeds. A warm pool member runs it before it is handed out (as E2B's templates run
 * theirs at build time), so it sees the template's environment, not the create's; a sandbox
 * booted for its create alone runs it after /init, with both.
 */
export async function startTemplateCommand(
  agent: SandboxAgentPort,
  address: string,
  accessToken: string,
  build: Build,
  /** Variables envd does not have yet: a pool member's, before any /init, the host's for every sandbox. */
  envVars?: Readonly<Record<string, string>>,
): Promise<void> {
  const { startCmd, readyCmd, user, workdir } = runtimeSpecOf(build);
  if (!startCmd) return;
  // otherwise no envVars: envd has them since its start (or /init)
  const target = { address, accessToken };
  await agent.runStartCommand(
    target,
    { startCmd, readyCmd, user, workdir, ...(envVars ? { envVars: { ...envVars } } : {}) },
    { timeoutMs: START_READY_TIMEOUT_MS },
  );
}
