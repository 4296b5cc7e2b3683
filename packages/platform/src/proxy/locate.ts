/**
 * Where a request goes: the sandbox's address as the resolver knows it, a signed file URL's
 * sandbox, a private sandbox's traffic access token checked, and a paused sandbox with
 * `autoResume` resumed first (once, however many requests wait); or the error to answer.
 */
import { timingSafeEqual } from "node:crypto";
import type { Logger } from "../lib/log.js";
import { DomainError, HTTP_STATUS } from "../model/errors.js";
import type { SandboxPools, Upstream } from "./exchanges.js";
import {
  brokenReply,
  type ErrorReply,
  lostReply,
  notFoundReply,
  notRunning,
  resumeForbiddenReply,
  signedMissesReply,
  trafficTokenReply,
} from "./replies.js";
import { ENVD_PORT, type ProxyTarget, signedFileMatcher } from "./routing.js";
import type { ProxyMetrics, SandboxAccess, SandboxLocation, SandboxResolver } from "./types.js";

type Resumed = { address: string; access?: SandboxAccess };

/** Signed requests whose sandbox is remembered (by what was signed), at most. */
const SIGNED_KEPT = 10_000;
/**
 * A client's signed file URLs that match no sandbox: each is a look at every running
 * sandbox's token, so they are limited (a burst, then a few a second); one that matches is free.
 */
const SIGNED_MISS_BURST = 20;
const SIGNED_MISSES_PER_SECOND = 2;
/** Clients whose misses are counted, at most (the oldest are forgotten first). */
const MISS_CLIENTS_KEPT = 10_000;

export interface LocatorOptions {
  resolver: SandboxResolver;
  log: Logger;
  /** Counts resumes. */
  metrics: ProxyMetrics;
  /** What is left of a sandbox the resolver no longer knows is dropped from here. */
  pools: SandboxPools;
}

export class SandboxLocator {
  private readonly resuming = new Map<string, Promise<Resumed | ErrorReply>>();
  /** The sandbox of each signed request seen, by its key: a repeated URL is no new search. */
  private readonly signedBy = new Map<string, string>();
  /** Each client's allowance of misses: what is left, and when it was counted. */
  private readonly misses = new Map<string, { left: number; at: number }>();

  constructor(private readonly o: LocatorOptions) {}

  /**
   * A signed file URL without routing information goes to the sandbox whose token signed it;
   * undefined when it is none (or names no sandbox), a 429 for a client (`client`, its
   * address) whose URLs keep matching none.
   */
  async signedTarget(
    method: string,
    url: string,
    client = "",
  ): Promise<ProxyTarget | ErrorReply | undefined> {
    const { resolver, log } = this.o;
    if (!resolver.resolveSigned) return undefined;
    const matches = signedFileMatcher(method, url);
    if (!matches) return undefined;
    const known = this.signedBy.get(matches.key);
    if (known) return { sandboxID: known, port: ENVD_PORT };
    // an IPv6 client is its /64: one host has all of it
    const allowance = this.allowance(client.includes(":") ? client.split(":").slice(0, 4).join(":") : client);
    if (allowance.left < 1) return signedMissesReply();
    let sandboxID: string | undefined;
    try {
      sandboxID = await resolver.resolveSigned(matches);
    } catch (err) {
      log.error({ err }, "signed URL lookup failed");
      return undefined;
    }
    if (!sandboxID) {
      allowance.left -= 1;
      return undefined;
    }
    if (this.signedBy.size >= SIGNED_KEPT) this.signedBy.delete(this.signedBy.keys().next().value!);
    this.signedBy.set(matches.key, sandboxID);
    return { sandboxID, port: ENVD_PORT };
  }

  /** A client's allowance of signed misses, refilled for the time since it was last counted. */
  private allowance(client: string): { left: number; at: number } {
    const now = Date.now();
    let a = this.misses.get(client);
    if (a) this.misses.delete(client);
    else {
      if (this.misses.size >= MISS_CLIENTS_KEPT) this.misses.delete(this.misses.keys().next().value!);
      a = { left: SIGNED_MISS_BURST, at: now };
    }
    a.left = Math.min(SIGNED_MISS_BURST, a.left + ((now - a.at) / 1000) * SIGNED_MISSES_PER_SECOND);
    a.at = now;
    // the most recently seen last: the oldest go first when too many are kept
    this.misses.set(client, a);
    return a;
  }

  /**
   * Where a request goes: the sandbox's address, resuming it first when it is paused with
   * autoResume, once its traffic access token (if it is private) checks out; or the error to
   * answer.
   */
  async locate(target: ProxyTarget, token: string | string[] | undefined): Promise<Upstream | ErrorReply> {
    const { resolver, log, pools } = this.o;
    const { sandboxID } = target;
    let location: SandboxLocation | undefined;
    try {
      location = await resolver.resolve(sandboxID);
    } catch (err) {
      log.error({ sandboxId: sandboxID, err }, "sandbox resolver failed");
      return {
        status: 500,
        kind: "resolver_failed",
        body: { code: 500, message: `Could not look up the sandbox ${sandboxID}; try again`, sandboxID },
      };
    }
    if (location?.state === "running") {
      // the node's own proxy checks tokens, masks hosts and speaks TLS to the sandbox
      if (location.relayPort !== undefined)
        return { address: location.address, tls: false, port: location.relayPort };
      return (
        refusedToken(target, location.access, token) ?? upstreamOf(target, location.address, location.access)
      );
    }
    if (location?.state === "error") return brokenReply(sandboxID, location.reason);
    if (location?.state === "lost") return lostReply(sandboxID, location.reason);
    if (!location) {
      // Gone without the orchestrator telling us: drop what is left of it.
      if (pools.has(sandboxID)) pools.cut(sandboxID);
      return notFoundReply(sandboxID);
    }
    if (!location.autoResume || !resolver.resume) {
      return notRunning(
        sandboxID,
        "sandbox_paused",
        `The sandbox ${sandboxID} is paused and not running; connect to it (Sandbox.connect) to resume it`,
      );
    }
    // traffic without the token wakes nobody
    if (refusedToken(target, location.access, token)) return resumeForbiddenReply(sandboxID);
    const resumed = await this.resume(sandboxID);
    return "address" in resumed ? upstreamOf(target, resumed.address, resumed.access) : resumed;
  }

  /** One resume however many requests wait on it. */
  private resume(sandboxID: string): Promise<Resumed | ErrorReply> {
    const { resolver, log, metrics } = this.o;
    let pending = this.resuming.get(sandboxID);
    if (!pending) {
      metrics.resumes++;
      log.info({ sandboxId: sandboxID }, "resuming a paused sandbox on request");
      const failed = notRunning(
        sandboxID,
        "resume_failed",
        `The sandbox ${sandboxID} is paused and could not be resumed`,
      );
      pending = resolver.resume!(sandboxID)
        .then(
          (resumed) => resumed ?? failed,
          (err: unknown): ErrorReply => {
            // the team at its limit: said as the API would say it to a connect
            if (err instanceof DomainError && err.code === "quota") {
              log.info({ sandboxId: sandboxID, reason: err.message }, "auto-resume refused");
              const status = HTTP_STATUS[err.code];
              return {
                status,
                kind: "resume_failed",
                body: { code: status, message: err.message, sandboxID },
              };
            }
            log.error({ sandboxId: sandboxID, err }, "auto-resume failed");
            return failed;
          },
        )
        .finally(() => this.resuming.delete(sandboxID));
      this.resuming.set(sandboxID, pending);
    }
    return pending;
  }
}

export function isUpstream(to: Upstream | ErrorReply): to is Upstream {
  return "address" in to;
}

/** How a request reaches its port: TLS for the sandbox's `httpsPorts`, its `maskRequestHost`. */
function upstreamOf(target: ProxyTarget, address: string, access: SandboxAccess | undefined): Upstream {
  if (target.port === ENVD_PORT || !access) return { address, tls: false };
  const mask = access.maskRequestHost?.replaceAll("${PORT}", String(target.port));
  return {
    address,
    tls: access.httpsPorts?.includes(target.port) ?? false,
    ...(mask !== undefined ? { host: mask } : {}),
  };
}

/**
 * The 403 for a private sandbox's port (every one but envd's, which has its own token) when
 * the request lacks its traffic access token or sends another; compared in constant time.
 */
function refusedToken(
  target: ProxyTarget,
  access: SandboxAccess | undefined,
  sent: string | string[] | undefined,
): ErrorReply | undefined {
  const expected = access?.trafficAccessToken;
  if (!expected || target.port === ENVD_PORT) return undefined;
  const token = Array.isArray(sent) ? sent[0] : sent;
  if (token === undefined) return trafficTokenReply(target.sandboxID, false);
  const a = Buffer.from(token);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b)
    ? undefined
    : trafficTokenReply(target.sandboxID, true);
}
