/**
 * A sandbox create sent to a node, and what the api answers when it loses the node's answer.
 *
 * A create is the one request whose blind repetition costs: a client told to retry after a
 * node took the create and then failed would end with two sandboxes, both counted against the
 * team's quota. So every create carries a ticket (store/create-tickets.ts), and the node's
 * record of it is the truth the api reconciles with before it answers:
 *
 * - the node never received the create (no connection, or not the whole request): nothing was
 *   made; 503 with `Retry-After`, as for any request;
 * - the node may have acted and had not finished a sandbox: the create is called off (the
 *   ticket goes; the node, if it still runs, ends what it began at its next step) and a sandbox
 *   it began is ended in the catalog at once, so it is neither listed nor counted, and a node
 *   that comes back does not adopt it. 502, no retry hint, saying so: creating again makes one;
 * - the node had finished the sandbox: it is this create's. It is handed over (connected
 *   through the node, answered 201 as the create would have been); when the node does not
 *   answer for that, 502 names the sandbox, which the team keeps.
 *
 * In every case the api knows what the node made before its caller can create another.
 */
import type { Call } from "../api/front-door.js";
import { REQUEST_ID_HEADER } from "../api/front-door.js";
import { CREATE_TICKET_HEADER } from "../api/routes/sandboxes.js";
import { sendJson } from "../api/server-io.js";
import type { Logger } from "../lib/log.js";
import { DomainError, unavailable } from "../model/errors.js";
import type { Team } from "../model/team.js";
import type { ClusterNode, Store } from "../store/index.js";
import type { Failed, Outcome } from "./upstream.js";

/** How long the api waits for a node to hand over a sandbox it finished. */
const HAND_OVER_TIMEOUT_MS = 30_000;

export interface CreateOnNode {
  store: Store;
  log: Logger;
  call: Call;
  team: Team;
  node: ClusterNode;
  /** The create's own timeout (seconds), for the hand-over; the sandbox's stays when unset. */
  timeoutSeconds: number | undefined;
  /** Sends the create with these headers added; the node's answer, when there is one, goes to the caller. */
  send(headers: Record<string, string>): Promise<Outcome>;
}

/** Sends a create to its node and answers for it whatever happens (see above). */
export async function createOnNode(o: CreateOnNode): Promise<void> {
  const { store, node } = o;
  const key = await store.createTickets.issue(o.team.id, node.id);
  const outcome = await o.send({ [CREATE_TICKET_HEADER]: key });
  if (outcome.kind === "answered") {
    await store.createTickets.settle(key).catch((err: unknown) => o.log.warn({ err }, "ticket not settled"));
    return;
  }
  await reconcile(o, key, outcome);
}

async function reconcile(o: CreateOnNode, key: string, failure: Failed): Promise<void> {
  const { store, node, log } = o;
  const found = await store.createTickets.abandon(key);
  log.warn({ nodeId: node.id, failure, found }, "create's answer lost: reconciled with the node's record");
  if (found.abandoned) {
    if (failure.kind === "not-received" && !found.sandboxId)
      throw unavailable(`node ${node.id} did not receive this create (${failure.reason}); try again`, 2);
    const ended = found.sandboxId ? await store.sandboxes.endCalledOff(found.sandboxId) : false;
    throw new DomainError(
      "may_have_acted",
      `node ${node.id} failed after it received this create (${failure.reason}); the create is called off${
        found.sandboxId
          ? `: sandbox ${found.sandboxId}, which the node had begun for it, ${ended ? "is ended" : "was ended already"}`
          : " before the node made a sandbox for it"
      }. Nothing of it is left running or counted: creating again makes one sandbox`,
    );
  }
  // the node finished it: the sandbox is the create's, and the ticket done with once answered
  const handed = found.sandboxId !== undefined && (await handOver(o, found.sandboxId));
  await store.createTickets.settle(key).catch((err: unknown) => log.warn({ err }, "ticket not settled"));
  if (handed) return;
  throw new DomainError(
    "may_have_acted",
    found.sandboxId
      ? `node ${node.id} made sandbox ${found.sandboxId} for this create, but its answer was lost (${failure.reason}) and it cannot hand the sandbox over now: the sandbox is yours (listed, and counted), connect to it or kill it rather than creating another`
      : `node ${node.id} failed after it received this create (${failure.reason}) and its record of it is gone: list the team's sandboxes before creating again`,
  );
}

/** The sandbox the node finished for the create, connected through the node and answered as the create's (201). */
async function handOver(o: CreateOnNode, sandboxId: string): Promise<boolean> {
  const { call, node } = o;
  const url = new URL(`/v2/sandboxes/${encodeURIComponent(sandboxId)}/connect`, node.apiUrl);
  const answer = await fetch(url, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      "x-api-key": String(call.req.headers["x-api-key"] ?? ""),
      [REQUEST_ID_HEADER]: call.requestId,
    },
    body: JSON.stringify(o.timeoutSeconds === undefined ? {} : { timeout: o.timeoutSeconds }),
    signal: AbortSignal.timeout(HAND_OVER_TIMEOUT_MS),
  }).catch(() => undefined);
  if (!answer || (answer.status !== 200 && answer.status !== 201)) return false;
  const body = await answer.json().catch(() => undefined);
  if (!body) return false;
  sendJson(call.res, 201, body);
  return true;
}
