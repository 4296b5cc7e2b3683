import type { ApiKeyRow, Store } from "../../store/index.js";
import { ApiError, notFound } from "../errors.js";
import type { Handler } from "../server.js";

function presentKey(row: ApiKeyRow) {
  return { apiKeyID: row.id, name: row.name, maskedKey: row.key_mask, createdAt: row.created_at, lastUsedAt: row.last_used_at };
}

/** The team's API keys: list, create (the key is shown once), revoke. */
export function keyRoutes(store: Store): Record<string, Handler> {
  return {
    listApiKeys: async ({ team }) => {
      if (!team) throw new ApiError(401, "missing API key");
      return { status: 200, body: (await store.teams.listKeys(team.id)).map(presentKey) };
    },
    createApiKey: async ({ team, body }) => {
      if (!team) throw new ApiError(401, "missing API key");
      const { key, row } = await store.teams.createKey(team.id, (body as { name: string }).name);
      return { status: 201, body: { ...presentKey(row), key } };
    },
    deleteApiKey: async ({ team, params }) => {
      if (!team) throw new ApiError(401, "missing API key");
      const id = params.apiKeyID as string;
      if (!(await store.teams.revokeKey(team.id, id))) throw notFound(`API key ${id} not found`);
      return { status: 204 };
    },
  };
}
