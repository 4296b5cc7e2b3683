import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import type { Schemas } from "@x/platform-client";
import { useMemo } from "react";
import { createVolumeClient } from "./client.js";
import { useApi } from "./context.js";
import { unwrap } from "./errors.js";

export type Volume = Schemas["Volume"];
export type VolumeEntry = Schemas["VolumeEntryStat"];

export const volumeKeys = {
  all: ["volumes"] as const,
  detail: (id: string) => ["volumes", id] as const,
  dir: (id: string, path: string) => ["volumes", id, "dir", path] as const,
};

export function useVolumes() {
  const { client } = useApi();
  return useQuery({
    queryKey: volumeKeys.all,
    queryFn: ({ signal }) => unwrap(client.GET("/volumes", { signal })),
    refetchInterval: 10000,
  });
}

/** A volume with its content token, use and mounts. */
export function useVolume(id: string) {
  const { client } = useApi();
  return useQuery({
    queryKey: volumeKeys.detail(id),
    queryFn: ({ signal }) =>
      unwrap(client.GET("/volumes/{volumeID}", { params: { path: { volumeID: id } }, signal })),
    refetchInterval: 10000,
  });
}

export function useCreateVolume() {
  const { client } = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (body: Schemas["NewVolume"]) => unwrap(client.POST("/volumes", { body })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: volumeKeys.all }),
  });
}

export function useDeleteVolume() {
  const { client } = useApi();
  const queryClient = useQueryClient();
  return useMutation({
    mutationFn: (id: string) =>
      unwrap(client.DELETE("/volumes/{volumeID}", { params: { path: { volumeID: id } } })),
    onSettled: () => queryClient.invalidateQueries({ queryKey: volumeKeys.all }),
  });
}

/** Calls of one volume's content API, with the volume's token. */
export interface VolumeContent {
  list(path: string, signal?: AbortSignal): Promise<VolumeEntry[]>;
  read(path: string): Promise<Blob>;
  write(path: string, data: Blob): Promise<VolumeEntry>;
  makeDir(path: string): Promise<VolumeEntry>;
  remove(path: string): Promise<void>;
}

export function volumeContent(volumeID: string, token: string): VolumeContent {
  const client = createVolumeClient(token);
  const path = { volumeID };
  return {
    list: (p, signal) =>
      unwrap(
        client.GET("/volumecontent/{volumeID}/dir", {
          params: { path, query: { path: p, depth: 1 } },
          signal,
        }),
      ),
    read: async (p) =>
      ((await unwrap(
        client.GET("/volumecontent/{volumeID}/file", {
          params: { path, query: { path: p } },
          parseAs: "blob",
        }),
      )) as Blob | undefined) ?? new Blob([]),
    write: (p, data) =>
      unwrap(
        client.PUT("/volumecontent/{volumeID}/file", {
          params: { path, query: { path: p, force: true } },
          body: data as never,
          bodySerializer: (body: unknown) => body as Blob,
          headers: { "Content-Type": "application/octet-stream" },
        }),
      ),
    makeDir: (p) =>
      unwrap(
        client.POST("/volumecontent/{volumeID}/dir", { params: { path, query: { path: p, force: true } } }),
      ),
    remove: (p) =>
      unwrap(client.DELETE("/volumecontent/{volumeID}/path", { params: { path, query: { path: p } } })).then(
        () => undefined,
      ),
  };
}

/** The volume's content API once its token is known. */
export function useVolumeContent(volumeID: string, token: string | undefined): VolumeContent | undefined {
  return useMemo(() => (token ? volumeContent(volumeID, token) : undefined), [volumeID, token]);
}
