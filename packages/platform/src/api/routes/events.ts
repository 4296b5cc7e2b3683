import type { Schemas } from "@x/platform-client";
import { invalid, notFound } from "../../model/errors.js";
import type { Team } from "../../model/team.js";
import {
  checkWebhookName,
  checkWebhookUrl,
  distinctEvents,
  MAX_WEBHOOKS_PER_TEAM,
  type Webhook,
  type WebhookAttempt,
} from "../../model/webhook.js";
import type { DestinationGuard } from "../../network/destination-guard.js";
import type { Store, WebhookChanges } from "../../store/index.js";
import { checkWebhookDestination } from "../../webhooks/destination.js";
import { LIFECYCLE_EVENT_TYPES, presentEvents } from "../../webhooks/sandbox-events.js";
import type { ApiRequest, HandlersFor } from "../handler.js";
import { pageOf } from "../paging.js";
import { teamOf } from "./access.js";

type EventOps =
  | "listSandboxEvents"
  | "listSandboxEventsOf"
  | "listWebhooks"
  | "createWebhook"
  | "getWebhook"
  | "updateWebhook"
  | "deleteWebhook"
  | "listWebhookDeliveries";

/** The events API's paging (E2B's: by offset). */
interface EventsQuery {
  offset?: number;
  limit?: number;
  orderAsc?: boolean;
}

/** A webhook as the API shows it: never its secret; the team under both of E2B's names. */
function presentWebhook(w: Webhook): Schemas["Webhook"] {
  return {
    id: w.id,
    teamID: w.teamId,
    teamId: w.teamId,
    name: w.name,
    createdAt: w.createdAt,
    enabled: w.enabled,
    url: w.url,
    events: w.events,
  };
}

function presentAttempt(a: WebhookAttempt): Schemas["WebhookDeliveryAttempt"] {
  return {
    deliveryID: a.id,
    eventID: a.eventId,
    eventType: a.eventType,
    attempt: a.attempt,
    timestamp: a.at,
    statusCode: a.statusCode,
    error: a.error,
    durationMs: a.durationMs,
    outcome: a.outcome,
  };
}

/**
 * The fields of a create or update, checked beyond what the spec says: the URL's host, too,
 * must be one the platform sends to (see webhooks/destination.ts).
 */
async function checked(body: Schemas["WebhookUpdate"], guard: DestinationGuard): Promise<WebhookChanges> {
  const url = body.url === undefined ? undefined : checkWebhookUrl(body.url);
  if (url !== undefined) await checkWebhookDestination(url, guard);
  return {
    ...(body.name !== undefined ? { name: checkWebhookName(body.name) } : {}),
    ...(url !== undefined ? { url } : {}),
    ...(body.enabled !== undefined ? { enabled: body.enabled } : {}),
    ...(body.events !== undefined ? { events: distinctEvents(body.events) } : {}),
    ...(body.signatureSecret !== undefined ? { signatureSecret: body.signatureSecret } : {}),
  };
}

/** The team's webhook of the path; another team's answers 404 like an unknown one. */
async function ownedWebhook(
  store: Store,
  team: Team,
  request: Pick<ApiRequest, "params"> & { params: { webhookID: string } },
): Promise<Webhook> {
  const id = request.params.webhookID;
  const webhook = await store.webhooks.get(team.id, id);
  if (!webhook) throw notFound(`webhook ${id} not found`);
  return webhook;
}

/**
 * Sandbox lifecycle events (E2B's events API) and the team's webhooks that are sent them
 * (E2B's webhooks API; delivery in webhooks/dispatcher.ts), with their delivery log.
 */
export function eventRoutes(store: Store, webhookGuard: DestinationGuard): HandlersFor<EventOps> {
  const events = async (team: Team, sandboxId: string | undefined, p: EventsQuery) => {
    const found = await store.events.forTeam(team.id, {
      types: LIFECYCLE_EVENT_TYPES,
      sandboxId,
      order: p.orderAsc ? "asc" : "desc",
      offset: p.offset ?? 0,
      limit: p.limit ?? 10,
    });
    return presentEvents(store, found);
  };
  return {
    listSandboxEvents: async (r) => ({ status: 200, body: await events(teamOf(r), undefined, r.params) }),
    listSandboxEventsOf: async (r) => ({
      status: 200,
      body: await events(teamOf(r), r.params.sandboxID, r.params),
    }),

    listWebhooks: async (r) => ({
      status: 200,
      body: (await store.webhooks.list(teamOf(r).id)).map(presentWebhook),
    }),
    createWebhook: async (r) => {
      const team = teamOf(r);
      const fields = await checked(r.body, webhookGuard);
      const webhook = await store.webhooks.insert(
        {
          teamId: team.id,
          name: fields.name!,
          url: fields.url!,
          enabled: r.body.enabled ?? true,
          events: fields.events!,
          signatureSecret: r.body.signatureSecret,
        },
        MAX_WEBHOOKS_PER_TEAM,
      );
      if (!webhook)
        throw invalid(
          `a team has at most ${MAX_WEBHOOKS_PER_TEAM} webhooks: delete one first (DELETE /events/webhooks/{webhookID})`,
        );
      return { status: 201, body: presentWebhook(webhook) };
    },
    getWebhook: async (r) => ({ status: 200, body: presentWebhook(await ownedWebhook(store, teamOf(r), r)) }),
    updateWebhook: async (r) => {
      const team = teamOf(r);
      const changes = await checked(r.body, webhookGuard);
      if (Object.keys(changes).length === 0)
        throw invalid("nothing to update: give one or more of name, url, enabled, events, signatureSecret");
      const webhook = await store.webhooks.update(team.id, r.params.webhookID, changes);
      if (!webhook) throw notFound(`webhook ${r.params.webhookID} not found`);
      return { status: 200, body: presentWebhook(webhook) };
    },
    deleteWebhook: async (r) => {
      const id = r.params.webhookID;
      if (!(await store.webhooks.delete(teamOf(r).id, id))) throw notFound(`webhook ${id} not found`);
      return { status: 200 };
    },

    listWebhookDeliveries: async (r) => {
      const webhook = await ownedWebhook(store, teamOf(r), r);
      const page = await pageOf(
        (limit, after) => store.webhookDeliveries.attempts(webhook.id, { limit, after }),
        { limit: r.params.limit, nextToken: r.params.nextToken, keyOf: (a) => ({ time: a.at, id: a.id }) },
      );
      return { status: 200, body: page.items.map(presentAttempt), headers: page.headers };
    },
  };
}
