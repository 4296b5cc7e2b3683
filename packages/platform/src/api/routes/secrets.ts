import type { Schemas } from "@x/platform-client";
import type { SecretInfo } from "../../model/secret.js";
import type { Secrets } from "../../secrets/secrets.js";
import type { HandlersFor } from "../handler.js";
import { pageOf } from "../paging.js";
import { teamOf } from "./access.js";

type SecretOps = "listSecrets" | "createSecret" | "getSecret" | "updateSecret" | "deleteSecret";

/** A secret as E2B's API shows it: never its value. */
function present(s: SecretInfo): Schemas["Secret"] {
  return {
    secretID: s.id,
    name: s.name,
    currentVersion: s.currentVersion,
    metadata: s.metadata,
    createdAt: s.createdAt,
    updatedAt: s.updatedAt,
  };
}

/** The team's secrets (E2B's wire); every answer under /secrets is `no-store` (front-door.ts). */
export function secretRoutes(secrets: Secrets): HandlersFor<SecretOps> {
  return {
    listSecrets: async (r) => {
      const teamId = teamOf(r).id;
      const page = await pageOf((limit, after) => secrets.list(teamId, { limit, after }), {
        limit: r.params.limit,
        nextToken: r.params.nextToken,
        keyOf: (s) => ({ time: s.createdAt, id: s.id }),
      });
      return { status: 200, body: page.items.map(present), headers: page.headers };
    },
    createSecret: async (r) => ({ status: 201, body: present(await secrets.create(teamOf(r).id, r.body)) }),
    getSecret: async (r) => ({
      status: 200,
      body: present(await secrets.get(teamOf(r).id, r.params.secretID)),
    }),
    updateSecret: async (r) => ({
      status: 200,
      body: present(await secrets.update(teamOf(r).id, r.params.secretID, r.body)),
    }),
    deleteSecret: async (r) => {
      await secrets.delete(teamOf(r).id, r.params.secretID);
      return { status: 204 };
    },
  };
}
