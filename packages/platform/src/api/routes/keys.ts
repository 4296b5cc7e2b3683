import type { Schemas } from "@x/platform-client";
import { ACCESS_TOKEN_PREFIX, API_KEY_PREFIX, SECRET_DIGITS } from "../../lib/ids.js";
import { notFound } from "../../model/errors.js";
import type { ApiKey } from "../../model/team.js";
import type { Store } from "../../store/index.js";
import type { HandlersFor } from "../handler.js";
import { teamOf } from "./access.js";

/** E2B's `mask` of a key or token, from the stored `prefix1234...abcd`. */
function maskOf(key: ApiKey): Schemas["IdentifierMaskingDetails"] {
  const prefix = key.kind === "access_token" ? ACCESS_TOKEN_PREFIX : API_KEY_PREFIX;
  const [head = "", tail = ""] = key.keyMask.split("...");
  return {
    prefix,
    valueLength: SECRET_DIGITS,
    maskedValuePrefix: head.slice(prefix.length),
    maskedValueSuffix: tail,
  };
}

/** An API key as the API shows it (`ApiKey` of openapi.yaml): never the secret itself. */
export function presentKey(key: ApiKey): Schemas["ApiKey"] {
  return {
    apiKeyID: key.id,
    id: key.id,
    name: key.name,
    maskedKey: key.keyMask,
    mask: maskOf(key),
    createdAt: key.createdAt,
    lastUsedAt: key.lastUsedAt,
    lastUsed: key.lastUsedAt,
    createdBy: null,
  };
}

function presentToken(token: ApiKey): Schemas["AccessToken"] {
  return {
    id: token.id,
    name: token.name,
    mask: maskOf(token),
    createdAt: token.createdAt,
    lastUsed: token.lastUsedAt,
  };
}

type CredentialOps =
  | "listApiKeys"
  | "createApiKey"
  | "updateApiKey"
  | "deleteApiKey"
  | "listAccessTokens"
  | "createAccessToken"
  | "deleteAccessToken";

/**
 * The team's API keys and access tokens: list, create (the secret is shown once), rename,
 * revoke. Another team's key or token answers 404, as an unknown one does.
 */
export function keyRoutes(store: Store): HandlersFor<CredentialOps> {
  return {
    listApiKeys: async (r) => ({
      status: 200,
      body: (await store.teams.listKeys(teamOf(r).id)).map(presentKey),
    }),
    createApiKey: async (r) => {
      const { key, apiKey } = await store.teams.createKey(teamOf(r).id, r.body.name);
      return { status: 201, body: { ...presentKey(apiKey), key } };
    },
    updateApiKey: async (r) => {
      const id = r.params.apiKeyID;
      const renamed = await store.teams.renameKey(teamOf(r).id, id, r.body.name);
      if (!renamed) throw notFound(`API key ${id} not found`);
      return { status: 200, body: presentKey(renamed) };
    },
    deleteApiKey: async (r) => {
      const id = r.params.apiKeyID;
      if (!(await store.teams.revokeKey(teamOf(r).id, id))) throw notFound(`API key ${id} not found`);
      return { status: 204 };
    },
    listAccessTokens: async (r) => ({
      status: 200,
      body: (await store.teams.listKeys(teamOf(r).id, "access_token")).map(presentToken),
    }),
    createAccessToken: async (r) => {
      const created = await store.teams.createAccessToken(
        teamOf(r).id,
        r.body.name,
        r.body.refreshable ?? false,
      );
      const refresh = created.refreshToken === undefined ? {} : { refreshToken: created.refreshToken };
      return { status: 201, body: { ...presentToken(created.apiKey), token: created.key, ...refresh } };
    },
    deleteAccessToken: async (r) => {
      const id = r.params.accessTokenID;
      if (!(await store.teams.revokeKey(teamOf(r).id, id, "access_token")))
        throw notFound(`access token ${id} not found`);
      return { status: 204 };
    },
  };
}
