import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Store } from "../../src/store/index.js";
import { verifySignature } from "../../src/webhooks/signature.js";

/** One request a receiver got, its signature checked against the receiver's secret. */
export interface Received {
  headers: http.IncomingHttpHeaders;
  raw: string;
  // biome-ignore lint/suspicious/noExplicitAny: tests read delivered bodies loosely
  body: any;
  signed: boolean;
}

/** What the receiver does with its n-th request (0 first): answer with a status, or never answer. */
export type Answer = (n: number, got: Received) => number | "hang";

export interface WebhookReceiver {
  url: string;
  received: Received[];
  /** Requests it has not answered (a hanging receiver's). */
  open(): number;
  /** The bodies' event ids, in the order they came. */
  eventIds(): string[];
  close(): Promise<void>;
}

/** A webhook endpoint on 127.0.0.1 that verifies E2B's signature on every request, as a receiver must. */
export async function startReceiver(secret: string, answer: Answer = () => 200): Promise<WebhookReceiver> {
  const received: Received[] = [];
  const hanging = new Set<http.ServerResponse>();
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const raw = Buffer.concat(chunks).toString("utf8");
      const signature = String(req.headers["e2b-signature"] ?? "");
      const got: Received = {
        headers: req.headers,
        raw,
        body: JSON.parse(raw),
        signed: verifySignature(secret, raw, signature),
      };
      const status = answer(received.length, got);
      received.push(got);
      if (status === "hang") {
        hanging.add(res);
        res.on("close", () => hanging.delete(res));
        return;
      }
      res.writeHead(status, { "Content-Type": "text/plain" }).end("ok");
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/hooks/e2b`,
    received,
    open: () => hanging.size,
    eventIds: () => received.map((r) => r.body.id as string),
    close: async () => {
      for (const res of hanging) res.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Waits until `check` holds, polling; fails with `what` after `timeoutMs`. */
export async function waitUntil(
  what: string,
  check: () => boolean | Promise<boolean>,
  timeoutMs = 20_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting until ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}

/**
 * Waits until every event recorded so far is matched to the webhooks and no delivery (of the
 * webhooks given) is pending: from then on nothing more is sent to them until new events, so
 * counts are final.
 */
export async function deliveriesSettled(store: Store, only?: { webhookIds: string[] }): Promise<void> {
  const db = store.db.kysely;
  await waitUntil(
    "every delivery is made",
    async () => {
      const last = await db
        .selectFrom("events")
        .select((eb) => eb.fn.max("id").as("id"))
        .executeTakeFirst();
      const cursor = await db.selectFrom("webhook_cursor").select("event_id").executeTakeFirst();
      let pending = db.selectFrom("webhook_deliveries").select("id").where("state", "=", "pending");
      if (only) pending = pending.where("webhook_id", "in", only.webhookIds);
      return (
        !(await pending.executeTakeFirst()) &&
        cursor !== undefined &&
        (!last?.id || cursor.event_id >= last.id)
      );
    },
    30_000,
  );
}
