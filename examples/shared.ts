import type { ConnectionOptions } from "@x/sdk";

/** What every example's `main` takes: where the platform is (else the environment) and a logger. */
export interface ExampleOptions extends ConnectionOptions {
  /** Where progress goes; `console.log` by default. */
  log?: (line: string) => void;
}

/** The sandbox proxy's URL, from the options or the environment, as the SDK resolves it. */
export function proxyUrl(options: ConnectionOptions): URL {
  const env = (name: string) => process.env[name] || undefined;
  return new URL(
    options.sandboxUrl ?? env("X_SANDBOX_URL") ?? env("E2B_SANDBOX_URL") ?? "http://localhost:3002",
  );
}
