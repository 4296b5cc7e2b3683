import { useQuery } from "@tanstack/react-query";
import type { Schemas } from "@x/platform-client";
import { useApi } from "./context.js";
import { unwrap, unwrapPage } from "./errors.js";
import type { ListedSandbox } from "./sandboxes.js";

export type ClusterNode = Schemas["ClusterNode"];

/** The cluster's nodes with their state and capacity, polled every 3 s. */
export function useNodes() {
  const { client } = useApi();
  return useQuery({
    queryKey: ["cluster", "nodes"],
    queryFn: ({ signal }) => unwrap(client.GET("/nodes", { signal })),
    refetchInterval: 3000,
  });
}

/** Pages of 100 read at most, so one refresh stays cheap however many sandboxes there are. */
export const MAX_SANDBOX_PAGES = 20;

/** The team's sandboxes counted by the node that runs them (`clientID`). */
export function useSandboxesByNode() {
  const { client } = useApi();
  return useQuery({
    queryKey: ["cluster", "sandboxes"],
    queryFn: async ({ signal }) => {
      const sandboxes: ListedSandbox[] = [];
      let nextToken: string | undefined;
      let pages = 0;
      do {
        const page = await unwrapPage(
          client.GET("/v2/sandboxes", { params: { query: { limit: 100, nextToken } }, signal }),
        );
        sandboxes.push(...page.items);
        nextToken = page.nextToken;
      } while (nextToken && ++pages < MAX_SANDBOX_PAGES);
      const byNode = new Map<string, { running: number; paused: number; other: number }>();
      for (const s of sandboxes) {
        const n = byNode.get(s.clientID) ?? { running: 0, paused: 0, other: 0 };
        if (s.state === "running") n.running++;
        else if (s.state === "paused") n.paused++;
        else n.other++;
        byNode.set(s.clientID, n);
      }
      return { byNode, truncated: nextToken !== undefined };
    },
    refetchInterval: 5000,
  });
}
