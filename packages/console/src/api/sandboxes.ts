import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Schemas } from "@x/platform-client";
import { useApi } from "./context.js";
import { unwrap, unwrapPage } from "./errors.js";

export type ListedSandbox = Schemas["ListedSandbox"];
export type SandboxRuntime = Schemas["SandboxRuntime"];
export type SandboxDetail = Schemas["SandboxDetail"];
export type SandboxState = Schemas["SandboxState"];
export type SandboxMetric = Schemas["SandboxMetric"];

const RUNTIME_LABELS: Record<SandboxRuntime, string> = { runsc: "gVisor", runc: "runc" };

/** How a sandbox's runtime is named to people: `gVisor` for `runsc`; `—` when not said. */
export function runtimeLabel(runtime: string | undefined): string {
  if (!runtime) return "—";
  return Object.hasOwn(RUNTIME_LABELS, runtime) ? RUNTIME_LABELS[runtime as SandboxRuntime] : runtime;
}

/** Arrays in this API's query strings are comma-separated (`state=running,paused`). */
const commaArrays = { array: { style: "form", explode: false } } as const;

export interface SandboxListFilters {
  states: SandboxState[];
  template: string;
  /** `key=value` pairs as typed, separated by `&`, `,` or spaces. */
  metadata: string;
  limit: number;
}

/** The API's metadata filter: each key and value percent-encoded, joined as a query string. */
export function metadataQuery(text: string): string | undefined {
  const pairs = text
    .split(/[&,\s]+/)
    .map((p) => p.trim())
    .filter(Boolean)
    .map((p) => {
      const eq = p.indexOf("=");
      const key = eq < 0 ? p : p.slice(0, eq);
      const value = eq < 0 ? "" : p.slice(eq + 1);
      return `${encodeURIComponent(key)}=${encodeURIComponent(value)}`;
    });
  return pairs.length > 0 ? pairs.join("&") : undefined;
}

export const sandboxKeys = {
  all: ["sandboxes"] as const,
  list: (filters: SandboxListFilters, nextToken: string | undefined) =>
    ["sandboxes", "list", filters, nextToken ?? null] as const,
  metricsOf: (ids: string[]) => ["sandboxes", "metrics", ids] as const,
  detail: (id: string) => ["sandboxes", "detail", id] as const,
  metrics: (id: string, rangeSeconds: number) =>
    ["sandboxes", "detail", id, "metrics", rangeSeconds] as const,
  events: (id: string) => ["sandboxes", "detail", id, "events"] as const,
};

/** One page of the team's sandboxes, polled every 2 s. */
export function useSandboxList(filters: SandboxListFilters, nextToken: string | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: sandboxKeys.list(filters, nextToken),
    queryFn: ({ signal }) =>
      unwrapPage(
        client.GET("/v2/sandboxes", {
          params: {
            query: {
              state: filters.states.length > 0 ? filters.states : undefined,
              template: filters.template.trim() || undefined,
              metadata: metadataQuery(filters.metadata),
              limit: filters.limit,
              nextToken,
            },
          },
          querySerializer: commaArrays,
          signal,
        }),
      ).then((page) => ({
        ...page,
        totalRunning: Number(page.response.headers.get("X-Total-Running") ?? Number.NaN),
      })),
    refetchInterval: 2000,
    placeholderData: (previous) => previous,
  });
}

/** The latest metric of each of these (running) sandboxes, polled every 2 s. */
export function useLatestMetrics(ids: string[]) {
  const { client } = useApi();
  return useQuery({
    queryKey: sandboxKeys.metricsOf(ids),
    queryFn: ({ signal }) =>
      unwrap(
        client.GET("/sandboxes/metrics", {
          params: { query: { sandbox_ids: ids.slice(0, 100) } },
          querySerializer: commaArrays,
          signal,
        }),
      ).then((r) => r.sandboxes),
    enabled: ids.length > 0,
    refetchInterval: 2000,
    placeholderData: (previous) => previous,
  });
}

export function useSandbox(id: string) {
  const { client } = useApi();
  return useQuery({
    queryKey: sandboxKeys.detail(id),
    queryFn: ({ signal }) =>
      unwrap(client.GET("/sandboxes/{sandboxID}", { params: { path: { sandboxID: id } }, signal })),
    refetchInterval: 5000,
  });
}

/** Samples of the last `rangeSeconds`, polled every 5 s. */
export function useSandboxMetrics(id: string, rangeSeconds: number, enabled: boolean) {
  const { client } = useApi();
  return useQuery({
    queryKey: sandboxKeys.metrics(id, rangeSeconds),
    queryFn: ({ signal }) => {
      const end = Math.floor(Date.now() / 1000);
      return unwrap(
        client.GET("/sandboxes/{sandboxID}/metrics", {
          params: { path: { sandboxID: id }, query: { start: end - rangeSeconds, end } },
          signal,
        }),
      );
    },
    enabled,
    refetchInterval: 5000,
    placeholderData: (previous) => previous,
  });
}

export function useSandboxEvents(id: string) {
  const { client } = useApi();
  return useQuery({
    queryKey: sandboxKeys.events(id),
    queryFn: ({ signal }) =>
      unwrap(
        client.GET("/events/sandboxes/{sandboxID}", {
          params: { path: { sandboxID: id }, query: { limit: 100 } },
          signal,
        }),
      ),
    refetchInterval: 3000,
  });
}

/** Invalidates what an action on a sandbox changes: its detail and every list. */
function useSandboxMutation<V, R>(fn: (vars: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSettled: () => queryClient.invalidateQueries({ queryKey: sandboxKeys.all }),
  });
}

export function usePauseSandbox(id: string) {
  const { client } = useApi();
  return useSandboxMutation((memory: boolean) =>
    unwrap(
      client.POST("/sandboxes/{sandboxID}/pause", { params: { path: { sandboxID: id } }, body: { memory } }),
    ),
  );
}

/** Resumes a paused sandbox (connect: also extends its timeout to at least `timeout` seconds). */
export function useResumeSandbox(id: string) {
  const { client } = useApi();
  return useSandboxMutation((timeout: number) =>
    unwrap(
      client.POST("/v2/sandboxes/{sandboxID}/connect", {
        params: { path: { sandboxID: id } },
        body: { timeout },
      }),
    ),
  );
}

export function useSetTimeout(id: string) {
  const { client } = useApi();
  return useSandboxMutation((timeout: number) =>
    unwrap(
      client.POST("/sandboxes/{sandboxID}/timeout", {
        params: { path: { sandboxID: id } },
        body: { timeout },
      }),
    ),
  );
}

export function useSnapshotSandbox(id: string) {
  const { client } = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["SandboxSnapshotRequest"]) =>
      unwrap(client.POST("/sandboxes/{sandboxID}/snapshots", { params: { path: { sandboxID: id } }, body })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: ["snapshots"] }),
  });
}

export function useKillSandbox(id: string) {
  const { client } = useApi();
  return useSandboxMutation(() =>
    unwrap(client.DELETE("/sandboxes/{sandboxID}", { params: { path: { sandboxID: id } } })),
  );
}

export function useCreateSandbox() {
  const { client } = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["NewSandboxV2"]) => unwrap(client.POST("/v2/sandboxes", { body })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: sandboxKeys.all }),
  });
}
