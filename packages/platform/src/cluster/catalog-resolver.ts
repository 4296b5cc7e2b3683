/**
 * The `x proxy` role's view of where sandboxes are: a sandbox's node, from the catalog, kept in
 * memory and dropped when PostgreSQL announces a change of that sandbox (`x_sandboxes`) or of
 * any node (`x_nodes`), so a request costs no query once its sandbox was looked up. The running
 * sandboxes' envd tokens, which a signed file URL that names no sandbox is matched against, are
 * kept the same way: read once, then only the sandboxes announced since are read again.
 */
import pg from "pg";
import type { Logger } from "../lib/log.js";
import type { SignedFileMatch } from "../proxy/routing.js";
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
  /** Whether signed file URLs are matched against the running sandboxes' tokens (the store opens them). */
  signed?: boolean;
  log: Logger;
}): CatalogResolver {
  const { store, log } = o;
  const cache = new Map<string, Promise<SandboxLocation | undefined>>();
  let listening = false;
  let client: pg.Client | undefined;
  let closed = false;
  let retry: NodeJS.Timeout | undefined;
  /** Running sandboxes' envd tokens by id, while listening; undefined: read them all again. */
  let tokens: Map<string, string> | undefined;
  /** Sandboxes announced since the tokens were read. */
  const changed = new Set<string>();
  /** The reading in progress, for every lookup that waits on it. */
  let reading: Promise<Map<string, string>> | undefined;

  function runningTokens(): Promise<Map<string, string>> {
    if (!listening)
      return store.sandboxes
        .runningTokens()
        .then((rows) => new Map(rows.map((r) => [r.id, r.envdAccessToken])));
    if (tokens && changed.size === 0) return Promise.resolve(tokens);
    reading ??= (async () => {
      try {
        // many changes at once: one read of all is cheaper than a long list of ids
        if (!tokens || changed.size > 1000) {
          changed.clear();
          const rows = await store.sandboxes.runningTokens();
          tokens = new Map(rows.map((r) => [r.id, r.envdAccessToken]));
        } else {
          const ids = [...changed];
          changed.clear();
          const rows = await store.sandboxes.runningTokens(ids);
          for (const id of ids) tokens.delete(id);
          for (const r of rows) tokens.set(r.id, r.envdAccessToken);
        }
        return tokens;
      } finally {
        reading = undefined;
      }
    })();
    return reading;
  }

  async function lookup(id: string): Promise<SandboxLocation | undefined> {
    const sandbox = await store.sandboxes.where(id);
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
      if (n.channel === "x_sandboxes" && n.payload) {
        cache.delete(n.payload);
        changed.add(n.payload);
      } else cache.clear();
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
    tokens = undefined;
    listening = true;
  }

  function lost(c: pg.Client): void {
    if (client !== c) return;
    client = undefined;
    listening = false;
    cache.clear();
    tokens = undefined;
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
    ...(o.signed === false
      ? {}
      : {
          async resolveSigned(matches: SignedFileMatch) {
            for (const [id, token] of await runningTokens()) if (matches(token)) return id;
            return undefined;
          },
        }),
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
