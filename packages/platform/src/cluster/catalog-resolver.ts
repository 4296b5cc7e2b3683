/**
 * The `x proxy` role's view of where sandboxes are: a sandbox's node, from the catalog, kept in
 * memory and dropped when PostgreSQL announces a change of that sandbox (`x_sandboxes`) or of
 * any node (`x_nodes`), so a request costs no query once its sandbox was looked up.
 */
import pg from "pg";
import type { Logger } from "../lib/log.js";
import type { SandboxLocation, SandboxResolver } from "../proxy/types.js";
import type { Store } from "../store/index.js";

export interface CatalogResolver extends SandboxResolver {
  /** Starts listening for changes; lookups work before, uncached. */
  listen(): Promise<void>;
  close(): Promise<void>;
}

/** Sandboxes whose location is kept at most. */
const MAX_CACHED = 100_000;

/** How long a listener that lost its connection waits before connecting again. */
const RELISTEN_MS = 1000;

export function createCatalogResolver(o: {
  store: Store;
  databaseUrl: string;
  log: Logger;
}): CatalogResolver {
  const { store, log } = o;
  const cache = new Map<string, Promise<SandboxLocation | undefined>>();
  let listening = false;
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;

  async function lookup(id: string): Promise<SandboxLocation | undefined> {
    const sandbox = await store.sandboxes.get(id);
    if (!sandbox || sandbox.state === "killed") return undefined;
    if (sandbox.state === "lost")
      return { state: "lost", reason: sandbox.reason ?? "its node stopped answering" };
    const node = sandbox.nodeId ? await store.nodes.get(sandbox.nodeId) : undefined;
    if (!node) return { state: "error", reason: `its node ${sandbox.nodeId} is not part of the cluster` };
    const entry = new URL(node.trafficUrl);
    // the node's proxy answers for every state: running, paused (and auto-resume), broken
    return { state: "running", address: entry.hostname, relayPort: Number(entry.port || 80) };
  }

  async function connect(): Promise<void> {
    const c = new pg.Client({ connectionString: o.databaseUrl });
    c.on("notification", (n) => {
      if (n.channel === "x_sandboxes" && n.payload) cache.delete(n.payload);
      else cache.clear();
    });
    c.on("error", (err) => {
      log.warn({ err }, "catalog notifications lost: looking sandboxes up uncached until they are back");
      lost(c);
    });
    c.on("end", () => lost(c));
    await c.connect();
    await c.query("listen x_sandboxes");
    await c.query("listen x_nodes");
    client = c;
    cache.clear(); // what changed while nobody listened
    listening = true;
  }

  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = undefined;
    listening = false;
    cache.clear();
    if (!closed) scheduleRelisten();
  }

  function scheduleRelisten(): void {
    clearTimeout(retry);
    retry = setTimeout(() => {
      connect().catch((err: unknown) => {
        log.debug({ err }, "catalog notifications: still reconnecting");
        scheduleRelisten();
      });
    }, RELISTEN_MS);
    retry.unref();
  }

  return {
    async resolve(id) {
      if (!listening) return lookup(id);
      let found = cache.get(id);
      if (!found) {
        found = lookup(id);
        // ids nobody has (any Host can name one) must not grow it without end
        if (cache.size >= MAX_CACHED) cache.clear();
        cache.set(id, found);
        // a failed lookup is not remembered
        found.catch(() => cache.delete(id));
      }
      return found;
    },
    async resolveSigned(matches) {
      for (const { id, envdAccessToken } of await store.sandboxes.runningTokens())
        if (matches(envdAccessToken)) return id;
      return undefined;
    },
    async listen() {
      await connect();
    },
    async close() {
      closed = true;
      clearTimeout(retry);
      const c = client;
      client = undefined;
      await c?.end().catch(() => undefined);
    },
  };
}
