import { mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { Sandbox } from "e2b";
import {
  createLogger,
  DEFAULTS,
  type Logger,
  type LogLevel,
  type Platform,
  type PlatformConfig,
  startPlatform,
} from "../../src/index.js";
import type { RuntimeName } from "../../src/runtime/container-runtime.js";
import { testNetwork } from "./test-networks.js";

/**
 * Images are cached across test runs here (the base image takes minutes to build once);
 * everything else a test platform makes lives in its own temp dir and is removed.
 */
export const TEST_DATA_DIR = process.env.X_TEST_DATA_DIR ?? "/var/tmp/x-test-data";

export const ENVD_BUNDLE_DIR = path.resolve(__dirname, "../../../envd/dist/bundle");

/** The web console as `pnpm build` leaves it, for tests that drive it in a browser. */
export const CONSOLE_DIST_DIR = path.resolve(__dirname, "../../../console/dist");

export interface TestPlatform {
  platform: Platform;
  apiUrl: string;
  proxyUrl: string;
  apiKey: string;
  stop(): Promise<void>;
}

export async function startTestPlatform(
  opts: {
    runtime?: RuntimeName;
    databaseUrl?: string;
    networkPrefix?: string;
    /** Limits and other settings to override. */
    config?: Partial<
      Pick<
        PlatformConfig,
        | "dataDir"
        | "maxSandboxesPerTeam"
        | "maxTimeoutSeconds"
        | "deepPauseAfterMs"
        | "warmPoolSize"
        | "diskSizeMB"
        | "allowInternal"
        | "networkCidr"
        | "dnsUpstreams"
        | "egressCaFiles"
        | "memoryReserveMB"
        | "processLimit"
        | "warmPoolMax"
        | "bootConcurrency"
        | "tlsPort"
        | "dnsListen"
        | "domain"
        | "registryMirrors"
        | "insecureRegistries"
        | "allowPrivateRegistries"
        | "credentialMirrors"
        | "allowPrivateWebhooks"
        | "consoleDir"
        | "secretsKeyFile"
        | "metricsTokenFile"
        | "tenantRuntimes"
      >
    >;
    /** The platform's logger; a quiet one (warnings up, X_LOG_LEVEL to change) when unset. */
    log?: Logger;
    /**
     * How the platform resolves the hosts tenants name (registries, webhooks): by default no
     * name resolves, so that tests never ask this host's resolvers (addresses are themselves).
     */
    resolveHost?(name: string): Promise<string[]>;
  } = {},
): Promise<TestPlatform> {
  const scratch = mkdtempSync(path.join(os.tmpdir(), "x-platform-"));
  // Test platforms may run side by side: each owns its own names and address range.
  const network = testNetwork("t");
  const prefix = opts.networkPrefix ?? network.prefix;
  const config: PlatformConfig = {
    ...DEFAULTS,
    dataDir: TEST_DATA_DIR,
    databaseUrl: opts.databaseUrl ?? `sqlite:${path.join(scratch, "platform.db")}`,
    apiPort: 0,
    proxyPort: 0,
    host: "127.0.0.1",
    defaultRuntime: opts.runtime,
    envdDir: ENVD_BUNDLE_DIR,
    networkPrefix: prefix,
    networkCidr: network.cidr,
    // tests that measure the pool turn it on; the rest see cold creates
    warmPoolSize: 0,
    // tests send traffic only to namespaces of their own: never to this host's resolvers
    dnsUpstreams: [],
    ...opts.config,
  };
  // quiet unless asked (X_LOG_LEVEL=debug): the suite's output is for failures
  const log =
    opts.log ??
    createLogger({
      level: (process.env.X_LOG_LEVEL as LogLevel | undefined) ?? "warn",
      format: "json",
    });
  const resolveHost =
    opts.resolveHost ??
    (async (name: string) => {
      throw Object.assign(new Error(`${name}: not resolved in tests`), { code: "ENOTFOUND" });
    });
  const platform = await startPlatform(config, { log, resolveHost });
  // a store of the test's own that outlives one platform (opts.databaseUrl) has its first key
  // already given out: such a test gets a new one
  const apiKey =
    platform.firstApiKey ??
    (opts.databaseUrl
      ? (await platform.store.teams.createKey((await platform.defaultTeam()).id, "test")).key
      : undefined);
  if (!apiKey) throw new Error("a fresh test store should have produced a first API key");
  return {
    platform,
    apiUrl: `http://127.0.0.1:${platform.apiPort}`,
    proxyUrl: `http://127.0.0.1:${platform.proxyPort}`,
    apiKey,
    stop: async () => {
      await platform.close({ destroy: true });
      rmSync(scratch, { recursive: true, force: true });
    },
  };
}

/**
 * Points the public e2b client at a platform through its environment variables, as a user
 * would; returns what puts the environment back as it was.
 */
export function pointE2bClient(at: { apiUrl: string; proxyUrl: string; apiKey: string }): () => void {
  const saved = { ...process.env };
  process.env.E2B_API_URL = at.apiUrl;
  process.env.E2B_SANDBOX_URL = at.proxyUrl;
  process.env.E2B_API_KEY = at.apiKey;
  return () => {
    process.env = saved;
  };
}

/**
 * For a describe block: a platform on `runtime`, the e2b client pointed at it and one sandbox
 * made through that client, all set up before its tests and removed after them.
 */
export function useE2bSandbox(runtime: RuntimeName): {
  readonly platform: TestPlatform;
  readonly sandbox: Sandbox;
} {
  let platform: TestPlatform | undefined;
  let sandbox: Sandbox | undefined;
  let restoreEnv = () => {};
  beforeAll(async () => {
    platform = await startTestPlatform({ runtime });
    restoreEnv = pointE2bClient(platform);
    sandbox = await Sandbox.create({ timeoutMs: 300_000 });
  });
  afterAll(async () => {
    await sandbox?.kill().catch(() => undefined);
    restoreEnv();
    await platform?.stop();
  });
  return {
    get platform() {
      if (!platform) throw new Error("the platform is not up: use it inside a test");
      return platform;
    },
    get sandbox() {
      if (!sandbox) throw new Error("the sandbox is not made yet: use it inside a test");
      return sandbox;
    },
  };
}
