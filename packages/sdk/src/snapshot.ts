import { allPages, type ConnectionOptions, platformClient, resolveConnection } from "./config.js";
import type { SnapshotInfo } from "./sandbox.js";
import { Template } from "./template.js";

export interface SnapshotListOptions extends ConnectionOptions {
  /** Only snapshots taken from this sandbox. */
  sandboxId?: string;
  /** Only snapshots with this name or ID (`snap`, `team/snap`, `snap:v1`). */
  name?: string;
  /** Page size the platform is asked for (1 to 100); every page is read either way. */
  pageSize?: number;
}

/** Snapshots of sandboxes, made with `sandbox.createSnapshot()`. */
export class Snapshot {
  private constructor() {}

  /** The team's snapshots, every page. */
  static list(opts: SnapshotListOptions = {}): Promise<SnapshotInfo[]> {
    const api = platformClient(resolveConnection(opts));
    return allPages("Listing snapshots", (nextToken) =>
      api.GET("/snapshots", {
        params: {
          query: { sandboxID: opts.sandboxId, name: opts.name, limit: opts.pageSize, nextToken },
        },
      }),
    );
  }

  /** Deletes a snapshot; `false` when there was none. Refused while sandboxes started from it live. */
  static delete(snapshotId: string, opts: ConnectionOptions = {}): Promise<boolean> {
    return Template.delete(snapshotId, opts);
  }
}
