import type { Logger } from "../lib/log.js";
import type { Store } from "../store/index.js";
import { freshAfter } from "./placement.js";

/**
 * Run by every api: a node whose heartbeat is older than the timeout is marked down and its
 * sandboxes lost, with the reason. Marking is one conditional update in the catalog, so of
 * several apis exactly one marks each node, and a node that comes back finds out by its next
 * heartbeat (see node-agent.ts).
 */
export class NodeMonitor {
  private timer: NodeJS.Timeout | undefined;
  private running = false;

  constructor(
    private readonly o: { store: Store; heartbeatTimeoutMs: number; everyMs?: number; log: Logger },
  ) {}

  start(): void {
    this.timer = setInterval(() => void this.check(), this.o.everyMs ?? 1000);
    this.timer.unref();
  }

  stop(): void {
    clearInterval(this.timer);
  }

  async check(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const { store, log } = this.o;
    try {
      // one transaction: a node is never down with its sandboxes still running in the catalog,
      // and a heartbeat of the node waits for it, then finds it down and reconciles
      const marked = await store.transaction(async (trx) => {
        const down: { nodeId: string; since: string; lost: number }[] = [];
        for (const nodeId of await trx.nodes.markSilentDown(freshAfter(this.o.heartbeatTimeoutMs))) {
          const since = (await trx.nodes.get(nodeId))?.heartbeatAt ?? "?";
          const reason = `its node ${nodeId} stopped answering (last heard at ${since})`;
          const lost = await trx.sandboxes.markLost(nodeId, reason);
          for (const sandboxId of lost) {
            const sandbox = await trx.sandboxes.where(sandboxId);
            await trx.events.record("sandbox.lost", {
              ...(sandbox ? { teamId: sandbox.teamId } : {}),
              sandboxId,
              data: { nodeId, since },
            });
          }
          down.push({ nodeId, since, lost: lost.length });
        }
        return down;
      });
      for (const m of marked) log.warn(m, "node marked down: its sandboxes are lost until it is back");
    } catch (err) {
      log.error({ err }, "node check failed");
    } finally {
      this.running = false;
    }
  }
}
