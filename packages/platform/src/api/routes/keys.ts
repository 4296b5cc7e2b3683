import type { Schemas } from "@x/platform-client";
import { notFound } from "../../model/errors.js";
import type { ApiKey } from "../../model/team.js";
import type { Store } from "../../store/index.js";
import type { HandlersFor } from "../handler.js";
import { teamOf } from "./access.js";

/** An API key as the API shows it (`ApiKey` of openapi.yaml): never the secret itself. */
export function presentKey(key: ApiKey): Schemas["ApiKey"] {
  return {
    apiKeyID: key.id,
    name: key.name,
    maskedKey: key.keyMask,
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
  };
}

/** The team's API keys: list, create (the key is shown once), revoke. Another team's key answers 404. */
export function keyRoutes(store: Store): HandlersFor<"listApiKeys" | "createApiKey" | "deleteApiKey"> {
  return {
    listApiKeys: async (r) => ({
      status: 200,
      body: (await store.teams.listKeys(teamOf(r).id)).map(presentKey),
    }),
    createApiKey: async (r) => {
      const { key, apiKey } = await store.teams.createKey(teamOf(r).id, r.body.name);
      return { status: 201, body: { ...presentKey(apiKey), key } };
    },
    deleteApiKey: async (r) => {
      const id = r.params.apiKeyID;
      if (!(await store.teams.revokeKey(teamOf(r).id, id))) throw notFound(`API key ${id} not found`);
      return { status: 204 };
    },
  };
}
