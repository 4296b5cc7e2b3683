import { createEnvdClient, type EnvdClient } from "@x/envd-client";
import { useMemo } from "react";
import type { ConsoleConfig } from "../api/config.js";
import { useConfig } from "../api/context.js";
import type { SandboxDetail } from "../api/sandboxes.js";

/** envd of this sandbox through the platform's proxy, from config.json's template. */
export function envdUrl(config: ConsoleConfig, sandboxID: string): string {
  const url = config.envdUrl.replaceAll("{sandboxID}", encodeURIComponent(sandboxID));
  return new URL(url, window.location.origin).toString().replace(/\/+$/, "");
}

/**
 * The envd client of a sandbox, authorised by its `envdAccessToken`; undefined while the
 * sandbox cannot be reached (not running, or no token).
 */
export function useEnvd(sandbox: SandboxDetail): EnvdClient | undefined {
  const config = useConfig();
  const token = sandbox.envdAccessToken;
  const running = sandbox.state === "running";
  return useMemo(
    () =>
      running && token
        ? createEnvdClient({ baseUrl: envdUrl(config, sandbox.sandboxID), accessToken: token })
        : undefined,
    [config, sandbox.sandboxID, token, running],
  );
}
