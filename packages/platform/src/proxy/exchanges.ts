import http from "node:http";
import https from "node:https";
import type net from "node:net";
import type { Logger } from "../lib/log.js";
import type { Downstream } from "./downstream.js";
import type { ErrorReply } from "./replies.js";
import type { ProxyTarget } from "./routing.js";
import type { ProxyMetrics } from "./types.js";

/** One request (or tunnel) in flight to a sandbox; `cut` ends it from the proxy's side. */
export interface Exchange {
  cut(): void;
}

/** Where one request goes inside a sandbox, and how. */
export interface Upstream {
  /** The sandbox's address on the host. */
  address: string;
  /** The port serves HTTPS (the sandbox's `httpsPorts`): TLS, certificate not verified. */
  tls: boolean;
  /** The Host to send instead of the client's (the sandbox's `maskRequestHost`). */
  host?: string;
  /**
   * Beyond one machine: the port of the sandbox's node's own proxy, which the request is relayed
   * to as it came (the target's port inside the sandbox otherwise).
   */
  port?: number;
}

/** A sandbox's keep-alive pools (plain and TLS) and its exchanges in flight. */
export interface SandboxConnections {
  agent: http.Agent;
  tlsAgent: https.Agent;
  exchanges: Set<Exchange>;
}

/**
 * Upstream connections per sandbox. The pool being per sandbox means a reused address can never
 * receive a previous sandbox's connection; cutting a sandbox ends its exchanges and its pool.
 */
export class SandboxPools {
  private readonly pools = new Map<string, SandboxConnections>();

  constructor(private readonly o: { maxSockets: number; idleTimeoutMs: number }) {}

  of(sandboxID: string): SandboxConnections {
    let connections = this.pools.get(sandboxID);
    if (!connections) {
      const pool = {
        keepAlive: true,
        maxSockets: this.o.maxSockets,
        maxFreeSockets: 64,
        scheduling: "lifo" as const,
        timeout: this.o.idleTimeoutMs,
      };
      connections = {
        agent: new http.Agent(pool),
        // a sandbox's own servers have certificates nobody can check (self-signed, any name)
        tlsAgent: new https.Agent({ ...pool, rejectUnauthorized: false }),
        exchanges: new Set(),
      };
      this.pools.set(sandboxID, connections);
    }
    return connections;
  }

  has(sandboxID: string): boolean {
    return this.pools.has(sandboxID);
  }

  /**
   * Ends every exchange of the sandbox and its pool, its connections reset: the sandbox is
   * about to be frozen, checkpointed or killed (see resetConnection).
   */
  cut(sandboxID: string): void {
    const connections = this.pools.get(sandboxID);
    if (!connections) return;
    this.pools.delete(sandboxID);
    for (const agent of [connections.agent, connections.tlsAgent]) {
      for (const sockets of [...Object.values(agent.sockets), ...Object.values(agent.freeSockets)])
        for (const socket of sockets ?? []) resetConnection(socket);
    }
    for (const exchange of connections.exchanges) exchange.cut();
    connections.agent.destroy();
    connections.tlsAgent.destroy();
  }

  cutAll(): void {
    for (const sandboxID of [...this.pools.keys()]) this.cut(sandboxID);
  }
}

/**
 * Ends a connection to a sandbox with an RST rather than a FIN. An RST closes the sandbox's end
 * in its network stack at once; after a FIN it stays open until the sandbox's process closes
 * it, which a frozen sandbox cannot do, and gVisor refuses to checkpoint a sandbox with an open
 * connection (ending the sandbox as it refuses). A TLS socket over a handle of Node's own
 * cannot be reset from here: it gets the FIN.
 */
export function resetConnection(socket: net.Socket): void {
  if (socket.destroyed) return;
  try {
    socket.resetAndDestroy();
  } catch {
    socket.destroy();
  }
}

/** What forwarding and tunnelling use of the proxy: its counters, pools, settings and replies. */
export interface ExchangeContext {
  readonly metrics: ProxyMetrics;
  readonly log: Logger;
  /** Keep and extend clients' `X-Forwarded-*`. */
  readonly trusted: boolean;
  connectionsOf(sandboxID: string): SandboxConnections;
  replyWith(down: Downstream, error: ErrorReply): void;
  replyRaw(socket: net.Socket, error: ErrorReply): void;
  upstreamError(target: ProxyTarget, err: NodeJS.ErrnoException): ErrorReply;
  readonly countFromClient: (chunk: Buffer) => void;
  readonly countToClient: (chunk: Buffer) => void;
  /** Gives a new upstream connection its connect deadline. */
  readonly onUpstreamSocket: (socket: net.Socket) => void;
}
