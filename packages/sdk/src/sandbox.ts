import type { PlatformClient, Schemas } from "@x/platform-client";
import { Commands } from "./commands.js";
import {
  allPages,
  type ConnectionOptions,
  envdClient,
  platformClient,
  type ResolvedConnection,
  resolveConnection,
  unwrap,
} from "./config.js";
import { ConflictError, found, fromHttpError, InvalidArgumentError, type SandboxError } from "./errors.js";
import { Filesystem } from "./filesystem.js";
import { Pty } from "./pty.js";
import type { Volume } from "./volume.js";

/** Sandboxes live five minutes unless told otherwise. */
const DEFAULT_SANDBOX_TIMEOUT_MS = 300_000;

export interface SandboxCreateOptions extends ConnectionOptions {
  /** Template ID, name or `name:tag`; `base` by default. */
  template?: string;
  /** Time to live in ms; the sandbox is killed (or paused) when it runs out. */
  timeoutMs?: number;
  metadata?: Schemas["SandboxMetadata"];
  /** Environment variables every command in the sandbox gets. */
  envs?: Schemas["EnvVars"];
  /** Container runtime: `runsc` (gVisor) or `runc`; the platform's default otherwise. */
  runtime?: Schemas["SandboxRuntime"];
  /** Volumes to mount read-write, by mount path: a `Volume` or a volume's name. */
  volumeMounts?: Record<string, Volume | string>;
  /**
   * Makes the create safe to repeat (the platform's `Idempotency-Key`, 1-255 visible ASCII
   * characters): a create sent again with the same key by the same team within 24 hours,
   * even while the first is still running, returns the sandbox the first one made instead of
   * a second one. The SDK does not retry creates itself; pass a key of your own (a
   * `crypto.randomUUID()` kept with the job, say) when your code retries them. The same key
   * with different options fails with `InvalidArgumentError`.
   */
  idempotencyKey?: string;
}

export interface SandboxConnectOptions extends ConnectionOptions {
  /** Extend the time to live to at least this many ms from now. */
  timeoutMs?: number;
}

export interface SandboxListOptions extends ConnectionOptions {
  /** Only sandboxes whose metadata has all these pairs. */
  metadata?: Record<string, string>;
  /** Only sandboxes in these states. */
  state?: Schemas["SandboxState"][];
}

export interface SandboxForkOptions extends ConnectionOptions {
  /** How many forks to start (default 1). */
  count?: number;
  /** Time to live of each fork in ms (the platform's default is 15 s). */
  timeoutMs?: number;
}

/** A snapshot: its `snapshotID` (`namespace/name:tag` or `<templateID>:<tag>`) is usable as a template. */
export type SnapshotInfo = Schemas["Snapshot"];

function seconds(ms: number): number {
  if (!Number.isFinite(ms) || ms < 0)
    throw new InvalidArgumentError(`timeoutMs must be a non-negative number of ms, got ${ms}`);
  return Math.ceil(ms / 1000);
}

function metadataQuery(metadata: Record<string, string>): string {
  return Object.entries(metadata)
    .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
    .join("&");
}

/** A sandbox: a Linux machine with its own filesystem, processes and terminals. */
export class Sandbox {
  readonly files: Filesystem;
  readonly commands: Commands;
  readonly pty: Pty;

  private constructor(
    readonly sandboxId: string,
    private readonly conn: ResolvedConnection,
    private readonly api: PlatformClient,
    private readonly info: Schemas["Sandbox"],
  ) {
    const envd = envdClient(conn, sandboxId, info.envdAccessToken);
    this.files = new Filesystem(envd);
    this.commands = new Commands(envd);
    this.pty = new Pty(envd, this.commands);
  }

  /** Starts a sandbox and returns once its agent answers. */
  static async create(opts: SandboxCreateOptions = {}): Promise<Sandbox> {
    const conn = resolveConnection(opts);
    const api = platformClient(conn);
    const info = await unwrap(
      "Creating a sandbox",
      api.POST("/v2/sandboxes", {
        params: { header: { "Idempotency-Key": opts.idempotencyKey } },
        body: {
          templateID: opts.template ?? "base",
          timeout: seconds(opts.timeoutMs ?? DEFAULT_SANDBOX_TIMEOUT_MS),
          metadata: opts.metadata,
          envVars: opts.envs,
          runtime: opts.runtime,
          volumeMounts: opts.volumeMounts
            ? Object.entries(opts.volumeMounts).map(([path, v]) => ({
                name: typeof v === "string" ? v : v.name,
                path,
              }))
            : undefined,
        },
      }),
    );
    return new Sandbox(info.sandboxID, conn, api, info);
  }

  /** Connects to a running sandbox, resuming it first if it is paused. */
  static async connect(sandboxId: string, opts: SandboxConnectOptions = {}): Promise<Sandbox> {
    const conn = resolveConnection(opts);
    const api = platformClient(conn);
    const info = await connectSandbox(api, sandboxId, opts.timeoutMs);
    return new Sandbox(sandboxId, conn, api, info);
  }

  /** The team's sandboxes (every page), newest first. */
  static list(opts: SandboxListOptions = {}): Promise<Schemas["ListedSandbox"][]> {
    const api = platformClient(resolveConnection(opts));
    return allPages("Listing sandboxes", (nextToken) =>
      api.GET("/v2/sandboxes", {
        params: {
          query: {
            metadata: opts.metadata ? metadataQuery(opts.metadata) : undefined,
            state: opts.state,
            nextToken,
          },
        },
      }),
    );
  }

  /**
   * Snapshots a running sandbox in place (it keeps running, with its ID and end time) and
   * starts `count` new sandboxes from the snapshot. One entry per fork, in order: the new
   * sandbox, or the error that stopped that fork. Throws `RateLimitError`, before anything is
   * done, when the `count` forks would not all fit the team's sandboxes.
   */
  static async fork(sandboxId: string, opts: SandboxForkOptions = {}): Promise<(Sandbox | SandboxError)[]> {
    const conn = resolveConnection(opts);
    const api = platformClient(conn);
    const results = await unwrap(
      `Forking sandbox ${sandboxId}`,
      api.POST("/sandboxes/{sandboxID}/fork", {
        params: { path: { sandboxID: sandboxId } },
        body: {
          ...(opts.count === undefined ? {} : { count: opts.count }),
          ...(opts.timeoutMs === undefined ? {} : { timeout: seconds(opts.timeoutMs) }),
        },
      }),
    );
    return results.map((result, i) =>
      result.sandbox
        ? new Sandbox(result.sandbox.sandboxID, conn, api, result.sandbox)
        : fromHttpError(result.error?.code ?? 500, result.error, `Fork ${i + 1} of sandbox ${sandboxId}`),
    );
  }

  /** Kills a sandbox; `false` when it did not exist (or was already gone). */
  static async kill(sandboxId: string, opts: ConnectionOptions = {}): Promise<boolean> {
    return killSandbox(platformClient(resolveConnection(opts)), sandboxId);
  }

  /** Host (`{port}-{sandboxId}.{domain}`) under which the proxy serves `port` of this sandbox. */
  getHost(port: number): string {
    return `${port}-${this.sandboxId}.${this.info.domain ?? new URL(this.conn.sandboxUrl).hostname}`;
  }

  /** Sets the sandbox's remaining time to live, in ms from now. */
  async setTimeout(timeoutMs: number): Promise<void> {
    await unwrap(
      `Setting the timeout of sandbox ${this.sandboxId}`,
      this.api.POST("/sandboxes/{sandboxID}/timeout", {
        params: { path: { sandboxID: this.sandboxId } },
        body: { timeout: seconds(timeoutMs) },
      }),
    );
  }

  /** State, resources, metadata and end time of the sandbox. */
  getInfo(): Promise<Schemas["SandboxDetail"]> {
    return unwrap(
      `Getting sandbox ${this.sandboxId}`,
      this.api.GET("/sandboxes/{sandboxID}", { params: { path: { sandboxID: this.sandboxId } } }),
    );
  }

  /** CPU, memory and disk usage samples of the sandbox. */
  getMetrics(): Promise<Schemas["SandboxMetric"][]> {
    return unwrap(
      `Getting metrics of sandbox ${this.sandboxId}`,
      this.api.GET("/sandboxes/{sandboxID}/metrics", { params: { path: { sandboxID: this.sandboxId } } }),
    );
  }

  /** Pauses the sandbox (keeping memory unless `keepMemory: false`); `false` when already paused. */
  async pause(opts: { keepMemory?: boolean } = {}): Promise<boolean> {
    try {
      await unwrap(
        `Pausing sandbox ${this.sandboxId}`,
        this.api.POST("/sandboxes/{sandboxID}/pause", {
          params: { path: { sandboxID: this.sandboxId } },
          body: opts.keepMemory === undefined ? {} : { memory: opts.keepMemory },
        }),
      );
      return true;
    } catch (err) {
      if (err instanceof ConflictError) return false;
      throw err;
    }
  }

  /** Resumes a paused sandbox (a no-op when it is running). */
  async resume(opts: { timeoutMs?: number } = {}): Promise<void> {
    await connectSandbox(this.api, this.sandboxId, opts.timeoutMs);
  }

  /** Kills the sandbox; `false` when it was already gone. */
  kill(): Promise<boolean> {
    return killSandbox(this.api, this.sandboxId);
  }

  /**
   * Saves the sandbox's files as a snapshot that `Sandbox.create({ template: snapshotId })`
   * accepts; with `name`, a new build of the snapshot of that name when there is one.
   */
  createSnapshot(opts: { name?: string } = {}): Promise<SnapshotInfo> {
    return unwrap(
      `Snapshotting sandbox ${this.sandboxId}`,
      this.api.POST("/sandboxes/{sandboxID}/snapshots", {
        params: { path: { sandboxID: this.sandboxId } },
        body: opts.name === undefined ? {} : { name: opts.name },
      }),
    );
  }

  /** Forks this sandbox: see `Sandbox.fork`. */
  fork(opts: Omit<SandboxForkOptions, keyof ConnectionOptions> = {}): Promise<(Sandbox | SandboxError)[]> {
    return Sandbox.fork(this.sandboxId, { ...this.conn, ...opts });
  }
}

function connectSandbox(
  api: PlatformClient,
  sandboxId: string,
  timeoutMs?: number,
): Promise<Schemas["Sandbox"]> {
  return unwrap(
    `Connecting to sandbox ${sandboxId}`,
    api.POST("/v2/sandboxes/{sandboxID}/connect", {
      params: { path: { sandboxID: sandboxId } },
      body: timeoutMs === undefined ? {} : { timeout: seconds(timeoutMs) },
    }),
  );
}

async function killSandbox(api: PlatformClient, sandboxId: string): Promise<boolean> {
  return found(
    unwrap(
      `Killing sandbox ${sandboxId}`,
      api.DELETE("/sandboxes/{sandboxID}", { params: { path: { sandboxID: sandboxId } } }),
    ),
  );
}
