import { readFileSync } from "node:fs";
import os from "node:os";
import type { Logger } from "../lib/log.js";
import type { NodeCapacity, Store } from "../store/index.js";

/** How often a node tells the catalog it is alive (the apis' timeout is a few of these). */
export const HEARTBEAT_MS = 2000;

/** The host's available memory (MemAvailable), in MB. */
export function availableMemoryMB(): number {
  const match = /^MemAvailable:\s+(\d+) kB/m.exec(readFileSync("/proc/meminfo", "utf8"));
  return match ? Math.floor(Number(match[1]) / 1024) : Math.floor(os.freemem() / 2 ** 20);
}

export interface NodeAgentOptions {
  store: Store;
  nodeId: string;
  apiUrl: string;
  trafficUrl: string;
  /** What the node can take now (read at every heartbeat). */
  capacity(): NodeCapacity;
  /** Marked down while it was alive (a stall, a partition): adopt its sandboxes again. */
  reconcile(): Promise<void>;
  log: Logger;
}

/**
 * A node's presence in the catalog: registered on start, a heartbeat with its capacity every
 * two seconds, and reconciliation when it finds it was marked down meanwhile.
 */
export class NodeAgent {
  private timer: NodeJS.Timeout | undefined;
  private beating: Promise<void> | undefined;

  constructor(private readonly o: NodeAgentOptions) {}

  async start(): Promise<void> {
    await this.register();
    this.timer = setInterval(() => {
      this.beating ??= this.beat().finally(() => {
        this.beating = undefined;
      });
    }, HEARTBEAT_MS);
  }

  async stop(): Promise<void> {
    clearInterval(this.timer);
    await this.beating;
  }

  private register(): Promise<void> {
    const { store, nodeId, apiUrl, trafficUrl } = this.o;
    return store.nodes.register({ id: nodeId, apiUrl, trafficUrl, capacity: this.o.capacity() });
  }

  private async beat(): Promise<void> {
    const { store, nodeId, log } = this.o;
    try {
      if (await store.nodes.heartbeat(nodeId, this.o.capacity())) return;
      log.warn({ nodeId }, "this node was marked down while it ran: reconciling its sandboxes");
      // registered first, so the apis stop marking it down while it adopts
      await this.register();
      await this.o.reconcile();
    } catch (err) {
      log.warn({ err }, "heartbeat failed");
    }
  }
}
