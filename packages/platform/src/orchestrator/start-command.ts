import { runStartCommand } from "../agent/start-command.js";
import type { Sandbox } from "../model/sandbox.js";
import { type Build, runtimeSpecOf } from "../model/template.js";

/** How long a template's start command may take to become ready when a sandbox starts. */
const START_READY_TIMEOUT_MS = 60_000;

/** A template's start command runs in each new sandbox; create returns once its ready command succeeds. */
export async function startTemplateCommand(sandbox: Sandbox, address: string, build: Build): Promise<void> {
  const { startCmd, readyCmd, user, workdir } = runtimeSpecOf(build);
  if (!startCmd) return;
  // no envVars: envd has the sandbox's (template and request) since /init
  const target = { address, accessToken: sandbox.envdAccessToken };
  await runStartCommand(target, { startCmd, readyCmd, user, workdir }, { timeoutMs: START_READY_TIMEOUT_MS });
}
