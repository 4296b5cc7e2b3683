import type { ApiKeyRow, Store } from "../../store/index.js";
import { notFound } from "../errors.js";
import type { Handler } from "../server.js";
import { teamOf } from "./access.js";

/** An API key as the API shows it (`ApiKey` of openapi.yaml): never the secret itself. */
export function presentKey(row: ApiKeyRow) {
  return {
    apiKeyID: row.id,
    name: row.name,
    maskedKey: row.key_mask,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
  };
}

/** The team's API keys: list, create (the key is shown once), revoke. Another team's key answers 404. */
export function keyRoutes(store: Store): Record<string, Handler> {
  return {
    listApiKeys: async (r) => ({
      status: 200,
      body: (await store.teams.listKeys(teamOf(r).id)).map(presentKey),
    }),
    createApiKey: async (r) => {
      const { key, row } = await store.teams.createKey(teamOf(r).id, (r.body as { name: string }).name);
      return { status: 201, body: { ...presentKey(row), key } };
    },
    deleteApiKey: async (r) => {
      const id = r.params.apiKeyID as string;
      if (!(await store.teams.revokeKey(teamOf(r).id, id))) throw notFound(`API key ${id} not found`);
      return { status: 204 };
    },
  };
}
