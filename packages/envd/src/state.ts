/** Mutable settings of one envd process: set by flags at start, changed later by `POST /init`. */
export interface EnvdState {
  /** Version reported to clients; the public client gates features on it (>= 0.6.4). */
  readonly version: string;
  /** When set, every route and RPC requires `X-Access-Token` to match it. */
  accessToken: string | undefined;
  /** User for requests that name none. */
  defaultUser: string;
  /** Working directory for processes that name none; the user's home when unset. */
  defaultWorkdir: string | undefined;
  /** Environment added to every process started here. */
  envVars: Record<string, string>;
  /**
   * Where `POST /init` writes the sandbox's identity files (`.E2B_SANDBOX`, `.E2B_SANDBOX_ID`,
   * …) as E2B's envd does under `/run/e2b`; unset: none are written (envd outside a sandbox).
   */
  runDir: string | undefined;
}

export const ENVD_VERSION = "0.6.4";

export function createState(init: Partial<Omit<EnvdState, "version">> = {}): EnvdState {
  return {
    version: ENVD_VERSION,
    accessToken: init.accessToken || undefined,
    defaultUser: init.defaultUser ?? "user",
    defaultWorkdir: init.defaultWorkdir,
    envVars: { ...init.envVars },
    runDir: init.runDir || undefined,
  };
}
