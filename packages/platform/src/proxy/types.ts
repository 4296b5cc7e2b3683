import type { SignedFileMatch } from "./routing.js";
/** How a sandbox's own URLs are served (its create's `network`). */
export interface SandboxAccess {
  /** Every port but envd's needs it in the `e2b-traffic-access-token` header. */
  trafficAccessToken?: string;
  /** The Host header requests go upstream with; `${PORT}` stands for the port. */
  maskRequestHost?: string;
  /** Ports inside the sandbox that serve HTTPS: the proxy speaks TLS to them (unverified). */
  httpsPorts?: readonly number[];
}

/** Where a sandbox can be reached, as the orchestrator knows it right now. */
export type SandboxLocation =
  | {
      state: "running";
      /** The sandbox's IP address on the host, or its node's (with `relayPort`). */
      address: string;
      access?: SandboxAccess;
      /** Beyond one machine: relay the request as it came to the node's proxy on this port. */
      relayPort?: number;
    }
  | {
      state: "paused" /** Resume on the first request instead of answering 502. */;
      autoResume: boolean;
      access?: SandboxAccess;
    }
  | { state: "error" /** It stopped working by itself: why. */; reason: string }
  | {
      state: "lost" /** Beyond one machine: its node stopped answering (why, and since when). */;
      reason: string;
    };

/**
 * The proxy's only view of the orchestrator. `resolve` runs on every request, so it should
 * answer from memory; `undefined` means unknown or killed.
 */
export interface SandboxResolver {
  resolve(sandboxID: string): Promise<SandboxLocation | undefined>;
  /** Resumes a paused sandbox; `undefined` when it cannot be resumed. Needed for autoResume. */
  resume?(sandboxID: string): Promise<{ address: string; access?: SandboxAccess } | undefined>;
  /** Looks at a sandbox whose agent does not answer; resolves whether it stopped working. */
  checkHealth?(sandboxID: string): Promise<boolean>;
  /**
   * For a signed file URL that names no sandbox: the id of the running sandbox whose envd
   * access token `matches`, if any. Without it such requests are 400 (no route).
   */
  resolveSigned?(matches: SignedFileMatch): Promise<string | undefined>;
}

/** Why the proxy answered with its own error or cut an exchange short. */
export type ProxyErrorKind =
  | "no_route"
  | "bad_request"
  | "sandbox_not_found"
  | "sandbox_paused"
  | "resume_failed"
  | "sandbox_broken"
  | "sandbox_lost"
  | "forbidden"
  | "rate_limited"
  | "resolver_failed"
  | "port_closed"
  | "upstream_unreachable"
  | "upstream_aborted"
  | "client_aborted"
  | "cut";

/** Live counters; read them when scraping. Bytes are message bodies and tunnelled data. */
export interface ProxyMetrics {
  /** Requests received, upgrades included. */
  requests: number;
  /** Exchanges with a sandbox in flight (streams and tunnels included). */
  active: number;
  upgrades: number;
  resumes: number;
  bytesFromClients: number;
  bytesToClients: number;
  /** Responses by status code, the proxy's own errors included. */
  responses: Record<number, number>;
  errors: Record<ProxyErrorKind, number>;
}
