import type { Sandbox } from "../model/sandbox.js";

/** How a sandbox's own URLs are served, as the proxy needs it on every request. */
export interface SandboxAccess {
  /** Every port but envd's needs it (the `e2b-traffic-access-token` header). */
  trafficAccessToken?: string;
  /** The Host header sent upstream; `${PORT}` is the port. */
  maskRequestHost?: string;
  /** Ports the proxy speaks TLS to. */
  httpsPorts?: readonly number[];
}

/** A sandbox's access settings, with only what applies. */
export function accessOf(sandbox: Pick<Sandbox, "ingress" | "trafficAccessToken">): SandboxAccess {
  const { ingress } = sandbox;
  return {
    ...(!ingress.allowPublicTraffic && sandbox.trafficAccessToken
      ? { trafficAccessToken: sandbox.trafficAccessToken }
      : {}),
    ...(ingress.maskRequestHost !== undefined ? { maskRequestHost: ingress.maskRequestHost } : {}),
    ...(ingress.httpsPorts.length > 0 ? { httpsPorts: ingress.httpsPorts } : {}),
  };
}

/**
 * What the orchestrator holds in memory about each sandbox it looks after, beside its record in
 * the store: where it is on the host, whether the proxy may send it traffic, and its timers.
 * One entry per sandbox; the store stays the record of its state.
 */
export interface LiveSandbox {
  /** The sandbox's address while it has a network (running, or frozen with its network kept). */
  address?: string;
  /** True while the proxy may route to `address`: not while pausing, paused or starting. */
  serving: boolean;
  /** The envd token it answers to, for matching signed file URLs that name no sandbox. */
  accessToken?: string;
  /** How its URLs are served (set with `serving`). */
  access?: SandboxAccess;
  /** Fires at the sandbox's end of life (timeout). */
  endTimer?: NodeJS.Timeout;
  /** Fires when a frozen sandbox is to be checkpointed or stopped. */
  deepPauseTimer?: NodeJS.Timeout;
}

export class LiveSandboxes {
  private readonly entries = new Map<string, LiveSandbox>();

  /** The sandbox's entry, made empty when it has none. */
  of(id: string): LiveSandbox {
    let entry = this.entries.get(id);
    if (!entry) {
      entry = { serving: false };
      this.entries.set(id, entry);
    }
    return entry;
  }

  has(id: string): boolean {
    return this.entries.has(id);
  }

  /** The sandbox answers at `address` from now on. */
  serve(
    id: string,
    address: string,
    sandbox: Pick<Sandbox, "envdAccessToken" | "ingress" | "trafficAccessToken">,
  ): void {
    Object.assign(this.of(id), {
      address,
      accessToken: sandbox.envdAccessToken,
      access: accessOf(sandbox),
      serving: true,
    });
  }

  /** Where the proxy may send the sandbox's traffic right now. */
  routable(id: string): string | undefined {
    const entry = this.entries.get(id);
    return entry?.serving ? entry.address : undefined;
  }

  /** The same, with how its URLs are served. */
  route(id: string): { address: string; access: SandboxAccess } | undefined {
    const entry = this.entries.get(id);
    return entry?.serving && entry.address
      ? { address: entry.address, access: entry.access ?? {} }
      : undefined;
  }

  clearTimers(id: string): void {
    const entry = this.entries.get(id);
    clearTimeout(entry?.endTimer);
    clearTimeout(entry?.deepPauseTimer);
  }

  delete(id: string): void {
    this.clearTimers(id);
    this.entries.delete(id);
  }

  ids(): Set<string> {
    return new Set(this.entries.keys());
  }

  /** Ids and entries of the sandboxes that serve right now. */
  *serving(): Iterable<[string, LiveSandbox]> {
    for (const [id, entry] of this.entries) if (entry.serving) yield [id, entry];
  }

  /** Stops every timer; the entries stay (for a platform that detaches). */
  stopTimers(): void {
    for (const id of this.entries.keys()) this.clearTimers(id);
  }
}
