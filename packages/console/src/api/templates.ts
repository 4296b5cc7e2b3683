import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Schemas } from "@x/platform-client";
import { useEffect, useState } from "react";
import { useApi } from "./context.js";
import { errorMessage, unwrap, unwrapPage } from "./errors.js";

export type Template = Schemas["Template"];
export type TemplateBuild = Schemas["TemplateBuild"];
export type TemplateBuildStatus = Schemas["TemplateBuildStatus"];
export type BuildLogEntry = Schemas["BuildLogEntry"];

export const templateKeys = {
  all: ["templates"] as const,
  list: ["templates", "list"] as const,
  detail: (id: string, nextToken: string | undefined) =>
    ["templates", "detail", id, nextToken ?? null] as const,
  tags: (id: string) => ["templates", "detail", id, "tags"] as const,
};

export type TemplateOwner = Schemas["TemplateOwner"];

/**
 * The name a template is shown by: its first name, else its ID; the platform's own by the bare
 * name every team creates them by (`base`, not `system/base`).
 */
export function templateLabel(t: {
  names?: string[];
  aliases?: string[];
  templateID: string;
  owner?: TemplateOwner;
}): string {
  if (t.owner === "system" && t.aliases?.[0]) return t.aliases[0];
  return t.names?.[0] ?? t.aliases?.[0] ?? t.templateID;
}

/** The templates the team may use: its own, then the platform's, then other teams' public ones. */
export function useTemplates() {
  const { client } = useApi();
  return useQuery({
    queryKey: templateKeys.list,
    queryFn: ({ signal }) =>
      unwrap(client.GET("/templates", { params: { query: { scope: "usable" } }, signal })),
    refetchInterval: 5000,
  });
}

/** A template with one page of its builds; polled while a build is under way. */
export function useTemplate(id: string, nextToken: string | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: templateKeys.detail(id, nextToken),
    queryFn: ({ signal }) =>
      unwrapPage(
        client.GET("/templates/{templateID}", {
          params: { path: { templateID: id }, query: { limit: 20, nextToken } },
          signal,
        }),
      ),
    placeholderData: (previous) => previous,
    refetchInterval: (q) =>
      q.state.data?.items.builds.some((b) => b.status === "building" || b.status === "waiting")
        ? 2000
        : 10000,
  });
}

export function useTemplateTags(id: string) {
  const { client } = useApi();
  return useQuery({
    queryKey: templateKeys.tags(id),
    queryFn: ({ signal }) =>
      unwrap(client.GET("/templates/{templateID}/tags", { params: { path: { templateID: id } }, signal })),
  });
}

function useTemplateMutation<V, R>(fn: (vars: V) => Promise<R>) {
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: fn,
    onSettled: () => queryClient.invalidateQueries({ queryKey: templateKeys.all }),
  });
}

/** Deletes a template, or a snapshot by its ID (the client deletes snapshots this way). */
export function useDeleteTemplate() {
  const { client } = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (templateID: string) =>
      unwrap(client.DELETE("/templates/{templateID}", { params: { path: { templateID } } })),
    onSettled: () =>
      Promise.all([
        queryClient.invalidateQueries({ queryKey: templateKeys.all }),
        queryClient.invalidateQueries({ queryKey: ["snapshots"] }),
      ]),
  });
}

export function useUpdateTemplate(id: string) {
  const { client } = useApi();
  return useTemplateMutation((body: Schemas["TemplateUpdateRequest"]) =>
    unwrap(client.PATCH("/v2/templates/{templateID}", { params: { path: { templateID: id } }, body })),
  );
}

export function useAssignTags() {
  const { client } = useApi();
  return useTemplateMutation((body: Schemas["AssignTemplateTagsRequest"]) =>
    unwrap(client.POST("/templates/tags", { body })),
  );
}

export function useDeleteTags() {
  const { client } = useApi();
  return useTemplateMutation((body: Schemas["DeleteTemplateTagsRequest"]) =>
    unwrap(client.DELETE("/templates/tags", { body })),
  );
}

export interface BuildProgress {
  status?: TemplateBuildStatus;
  reason?: Schemas["BuildStatusReason"];
  logs: BuildLogEntry[];
  error?: string;
  /** Steps done and in all, from the builder's `[n/total]` lines, when it wrote any. */
  step?: { current: number; total: number };
}

const STEP = /^\[(\d+)\/(\d+)\]/;

/**
 * A build's status and its whole log: reads on from the log offset every second while the build
 * waits or runs, then until a page comes back empty (what the e2b client does).
 */
export function useBuildProgress(templateID: string, buildID: string): BuildProgress {
  const { client } = useApi();
  const queryClient = useQueryClient();
  const [state, setState] = useState<BuildProgress>({ logs: [] });
  useEffect(() => {
    setState({ logs: [] });
    const controller = new AbortController();
    let offset = 0;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let lastStatus: TemplateBuildStatus | undefined;
    const tick = async () => {
      let again = 1000;
      try {
        const info = await unwrap(
          client.GET("/templates/{templateID}/builds/{buildID}/status", {
            params: { path: { templateID, buildID }, query: { logsOffset: offset, limit: 100 } },
            signal: controller.signal,
          }),
        );
        offset += info.logEntries.length;
        const running = info.status === "waiting" || info.status === "building";
        if (lastStatus && lastStatus !== info.status)
          void queryClient.invalidateQueries({ queryKey: templateKeys.all });
        lastStatus = info.status;
        setState((s) => {
          const logs = [...s.logs, ...info.logEntries];
          let step = s.step;
          for (const e of info.logEntries) {
            const m = STEP.exec(e.message);
            if (m) step = { current: Number(m[1]), total: Number(m[2]) };
          }
          return { status: info.status, reason: info.reason, logs, step };
        });
        if (info.logEntries.length >= 100) again = 0;
        else if (!running) return;
      } catch (err) {
        if (controller.signal.aborted) return;
        setState((s) => ({ ...s, error: errorMessage(err) }));
        again = 3000;
      }
      if (!controller.signal.aborted) timer = setTimeout(tick, again);
    };
    void tick();
    return () => {
      controller.abort();
      clearTimeout(timer);
    };
  }, [client, queryClient, templateID, buildID]);
  return state;
}

export type Snapshot = Schemas["Snapshot"];

export function useSnapshots(nextToken: string | undefined) {
  const { client } = useApi();
  return useQuery({
    queryKey: ["snapshots", nextToken ?? null],
    queryFn: ({ signal }) =>
      unwrapPage(client.GET("/snapshots", { params: { query: { limit: 50, nextToken } }, signal })),
    placeholderData: (previous) => previous,
    refetchInterval: 10000,
  });
}
