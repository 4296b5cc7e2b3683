import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Schemas } from "@x/platform-client";
import { useApi } from "./context.js";
import { unwrap, unwrapPage } from "./errors.js";

export type ApiKey = Schemas["ApiKey"];
export type AccessToken = Schemas["AccessToken"];
export type TeamDetail = Schemas["TeamDetail"];
export type TeamMetric = Schemas["TeamMetric"];
export type Webhook = Schemas["Webhook"];
export type SandboxEventType = Schemas["SandboxEventType"];

export const teamKeys = {
  teams: (id: string) => ["teams", id] as const,
  team: (id: string) => ["team", id] as const,
  metrics: (id: string, rangeSeconds: number) => ["team", id, "metrics", rangeSeconds] as const,
  apiKeys: ["api-keys"] as const,
  accessTokens: ["access-tokens"] as const,
  webhooks: ["webhooks"] as const,
  deliveries: (id: string, nextToken: string | undefined) =>
    ["webhooks", id, "deliveries", nextToken ?? null] as const,
};

/** Every type of lifecycle event, in the spec's order. */
export const SANDBOX_EVENT_TYPES: SandboxEventType[] = [
  "sandbox.lifecycle.created",
  "sandbox.lifecycle.killed",
  "sandbox.lifecycle.updated",
  "sandbox.lifecycle.paused",
  "sandbox.lifecycle.resumed",
  "sandbox.lifecycle.timed_out",
  "sandbox.lifecycle.error",
  "sandbox.lifecycle.lost",
];

export function useTeam() {
  const { client, session } = useApi();
  return useQuery({
    queryKey: teamKeys.team(session.teamID),
    queryFn: ({ signal }) =>
      unwrap(client.GET("/teams/{teamID}", { params: { path: { teamID: session.teamID } }, signal })),
    refetchInterval: 10000,
  });
}

/** The team's concurrency and start rate over the last `rangeSeconds`. */
export function useTeamMetrics(rangeSeconds: number) {
  const { client, session } = useApi();
  return useQuery({
    queryKey: teamKeys.metrics(session.teamID, rangeSeconds),
    queryFn: async ({ signal }) => {
      const end = Math.floor(Date.now() / 1000);
      const start = end - rangeSeconds;
      const path = { teamID: session.teamID };
      const [points, maxConcurrent, maxRate] = await Promise.all([
        unwrap(client.GET("/teams/{teamID}/metrics", { params: { path, query: { start, end } }, signal })),
        unwrap(
          client.GET("/teams/{teamID}/metrics/max", {
            params: { path, query: { start, end, metric: "concurrent_sandboxes" } },
            signal,
          }),
        ),
        unwrap(
          client.GET("/teams/{teamID}/metrics/max", {
            params: { path, query: { start, end, metric: "sandbox_start_rate" } },
            signal,
          }),
        ),
      ]);
      return { points, maxConcurrent, maxRate };
    },
    refetchInterval: 15000,
    placeholderData: (previous) => previous,
  });
}

export function useApiKeys() {
  const { client } = useApi();
  return useQuery({
    queryKey: teamKeys.apiKeys,
    queryFn: ({ signal }) => unwrap(client.GET("/api-keys", { signal })),
  });
}

function useInvalidating<V, R>(key: readonly unknown[], fn: (vars: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({ mutationFn: fn, onSettled: () => queryClient.invalidateQueries({ queryKey: key }) });
}

export function useCreateApiKey() {
  const { client } = useApi();
  return useInvalidating(teamKeys.apiKeys, (name: string) =>
    unwrap(client.POST("/api-keys", { body: { name } })),
  );
}

export function useRenameApiKey() {
  const { client } = useApi();
  return useInvalidating(teamKeys.apiKeys, ({ id, name }: { id: string; name: string }) =>
    unwrap(client.PATCH("/api-keys/{apiKeyID}", { params: { path: { apiKeyID: id } }, body: { name } })),
  );
}

export function useRevokeApiKey() {
  const { client } = useApi();
  return useInvalidating(teamKeys.apiKeys, (id: string) =>
    unwrap(client.DELETE("/api-keys/{apiKeyID}", { params: { path: { apiKeyID: id } } })),
  );
}

export function useAccessTokens() {
  const { client } = useApi();
  return useQuery({
    queryKey: teamKeys.accessTokens,
    queryFn: ({ signal }) => unwrap(client.GET("/access-tokens", { signal })),
  });
}

export function useCreateAccessToken() {
  const { client } = useApi();
  return useInvalidating(teamKeys.accessTokens, (name: string) =>
    unwrap(client.POST("/access-tokens", { body: { name } })),
  );
}

/**
 * The credential's teams (`GET /teams`), read once: with an access token the platform makes a
 * key for it on each call (replacing the last), so this is not polled.
 */
export function useTeams() {
  const { client, session } = useApi();
  return useQuery({
    queryKey: teamKeys.teams(session.teamID),
    queryFn: ({ signal }) => unwrap(client.GET("/teams", { signal })),
    staleTime: Number.POSITIVE_INFINITY,
    refetchOnWindowFocus: false,
  });
}

/** An access token with a refresh token, as `e2b auth login` keeps it. */
export type CliToken = Schemas["CreatedAccessToken"] & { refreshToken: string };

/** Makes a refreshable access token for the e2b CLI (`POST /access-tokens`). */
export function useCreateCliToken() {
  const { client } = useApi();
  return useInvalidating(teamKeys.accessTokens, async (name: string): Promise<CliToken> => {
    const created = await unwrap(client.POST("/access-tokens", { body: { name, refreshable: true } }));
    if (created.refreshToken) return { ...created, refreshToken: created.refreshToken };
    // useless to the CLI without its refresh token: take it back rather than leave it about
    await unwrap(
      client.DELETE("/access-tokens/{accessTokenID}", { params: { path: { accessTokenID: created.id } } }),
    ).catch(() => undefined);
    throw new Error("The platform made the access token without a refresh token; it was revoked.");
  });
}

export function useRevokeAccessToken() {
  const { client } = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(client.DELETE("/access-tokens/{accessTokenID}", { params: { path: { accessTokenID: id } } })),
    // revoking a token also revokes the key `GET /teams` made for it
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: teamKeys.accessTokens }),
        queryClient.invalidateQueries({ queryKey: teamKeys.apiKeys }),
      ]),
  });
}

export function useWebhooks() {
  const { client } = useApi();
  return useQuery({
    queryKey: teamKeys.webhooks,
    queryFn: ({ signal }) => unwrap(client.GET("/events/webhooks", { signal })),
  });
}

export function useCreateWebhook() {
  const { client } = useApi();
  return useInvalidating(teamKeys.webhooks, (body: Schemas["NewWebhook"]) =>
    unwrap(client.POST("/events/webhooks", { body })),
  );
}

export function useUpdateWebhook() {
  const { client } = useApi();
  return useInvalidating(teamKeys.webhooks, ({ id, body }: { id: string; body: Schemas["WebhookUpdate"] }) =>
    unwrap(client.PATCH("/events/webhooks/{webhookID}", { params: { path: { webhookID: id } }, body })),
  );
}

export function useDeleteWebhook() {
  const { client } = useApi();
  return useInvalidating(teamKeys.webhooks, (id: string) =>
    unwrap(client.DELETE("/events/webhooks/{webhookID}", { params: { path: { webhookID: id } } })),
  );
}

export function useWebhookDeliveries(id: string, nextToken: string | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: teamKeys.deliveries(id, nextToken),
    queryFn: ({ signal }) =>
      unwrapPage(
        client.GET("/events/webhooks/{webhookID}/deliveries", {
          params: { path: { webhookID: id }, query: { limit: 50, nextToken } },
          signal,
        }),
      ),
    placeholderData: (previous) => previous,
    refetchInterval: 5000,
  });
}
