import {
  useAccessTokens,
  useApiKeys,
  useCreateAccessToken,
  useCreateApiKey,
  useRenameApiKey,
  useRevokeAccessToken,
  useRevokeApiKey,
} from "../../api/team.js";
import { SecretsTable } from "./secrets-table.js";

/** The team's API keys (`X-API-Key`). */
export function ApiKeysTab() {
  const keys = useApiKeys();
  const create = useCreateApiKey();
  const rename = useRenameApiKey();
  const revoke = useRevokeApiKey();
  const createSecret = {
    ...create,
    mutate: (name: string, opts?: { onSuccess?: (r: { secret: string }) => void }) =>
      create.mutate(name, { onSuccess: (k) => opts?.onSuccess?.({ secret: k.key }) }),
  };
  return (
    <SecretsTable
      noun="API key"
      about="Keys authenticate the SDK, the e2b client and the CLI (X-API-Key, or E2B_API_KEY)."
      rows={keys.data?.map((k) => ({
        id: k.id,
        name: k.name,
        mask: k.mask,
        createdAt: k.createdAt,
        lastUsed: k.lastUsed,
      }))}
      loading={keys.isPending}
      error={keys.error}
      create={createSecret}
      rename={rename}
      revoke={revoke}
      testPrefix="api-key"
    />
  );
}

/** The team's access tokens (`Authorization: Bearer sk_e2b_…`). */
export function AccessTokensTab() {
  const tokens = useAccessTokens();
  const create = useCreateAccessToken();
  const revoke = useRevokeAccessToken();
  const createSecret = {
    ...create,
    mutate: (name: string, opts?: { onSuccess?: (r: { secret: string }) => void }) =>
      create.mutate(name, { onSuccess: (t) => opts?.onSuccess?.({ secret: t.token }) }),
  };
  return (
    <SecretsTable
      noun="access token"
      about="Bearer tokens for the console and e2b auth; accepted wherever an API key is. Revoking one also revokes the key GET /teams made for it."
      rows={tokens.data?.map((t) => ({
        id: t.id,
        name: t.name,
        mask: t.mask,
        createdAt: t.createdAt,
        lastUsed: t.lastUsed,
      }))}
      loading={tokens.isPending}
      error={tokens.error}
      create={createSecret}
      revoke={revoke}
      testPrefix="access-token"
    />
  );
}
