import type { Schemas } from "@x/platform-client";
import { createPlatformClient, type PlatformClient } from "@x/platform-client";
import {
  type ConnectionOptions,
  platformClient,
  type ResolvedConnection,
  resolveConnection,
  unwrap,
} from "./config.js";
import { found } from "./errors.js";

/** A file or directory in a volume. */
export type VolumeEntry = Schemas["VolumeEntryStat"];

export interface VolumeCreateOptions extends ConnectionOptions {
  /** Capacity in MB; the platform's default when unset. */
  sizeMB?: number;
}

/** Owner, group and permission bits of what a call creates (default 1000:1000, 0644 or 0755). */
export interface VolumeWriteOptions {
  uid?: number;
  gid?: number;
  mode?: number;
  /** Create missing parents; replace a file that exists (else 409). */
  force?: boolean;
}

/**
 * A team's persistent volume, mounted into sandboxes with `Sandbox.create({ volumeMounts })`.
 * The static methods manage volumes with the team's API key; an instance reads and writes
 * the volume's files with the volume's own token, which lasts as long as the volume.
 */
export class Volume {
  private readonly content: PlatformClient;

  private constructor(
    readonly volumeId: string,
    readonly name: string,
    private readonly token: string,
    conn: ResolvedConnection,
  ) {
    this.content = createPlatformClient({
      baseUrl: conn.apiUrl,
      headers: { Authorization: `Bearer ${token}` },
      fetch: conn.fetch,
    });
  }

  static async create(name: string, opts: VolumeCreateOptions = {}): Promise<Volume> {
    const conn = resolveConnection(opts);
    const v = await unwrap(
      `Creating volume '${name}'`,
      platformClient(conn).POST("/volumes", { body: { name, sizeMB: opts.sizeMB } }),
    );
    return new Volume(v.volumeID, v.name, v.token, conn);
  }

  /** A volume of the team by ID, ready for its files. */
  static async connect(volumeId: string, opts: ConnectionOptions = {}): Promise<Volume> {
    const conn = resolveConnection(opts);
    const v = await Volume.getInfo(volumeId, opts);
    return new Volume(v.volumeID, v.name, v.token, conn);
  }

  /** The volume with its size, what it uses and which sandboxes mount it. */
  static getInfo(volumeId: string, opts: ConnectionOptions = {}): Promise<Schemas["VolumeAndToken"]> {
    return unwrap(
      `Reading volume ${volumeId}`,
      platformClient(resolveConnection(opts)).GET("/volumes/{volumeID}", {
        params: { path: { volumeID: volumeId } },
      }),
    );
  }

  static list(opts: ConnectionOptions = {}): Promise<Schemas["Volume"][]> {
    return unwrap("Listing volumes", platformClient(resolveConnection(opts)).GET("/volumes"));
  }

  /** Deletes the volume and its files; `false` when there was none. Refused while a sandbox mounts it. */
  static destroy(volumeId: string, opts: ConnectionOptions = {}): Promise<boolean> {
    return found(
      unwrap(
        `Deleting volume ${volumeId}`,
        platformClient(resolveConnection(opts)).DELETE("/volumes/{volumeID}", {
          params: { path: { volumeID: volumeId } },
        }),
      ),
    );
  }

  private where(path: string) {
    return { path: { volumeID: this.volumeId }, query: { path } };
  }

  getInfo(path: string): Promise<VolumeEntry> {
    return unwrap(
      `Reading ${path}`,
      this.content.GET("/volumecontent/{volumeID}/path", { params: this.where(path) }),
    );
  }

  exists(path: string): Promise<boolean> {
    return found(this.getInfo(path));
  }

  /** The directory's entries; subdirectories' after them down to `depth` levels (1 to 10). */
  list(path: string, opts: { depth?: number } = {}): Promise<VolumeEntry[]> {
    const params = this.where(path);
    return unwrap(
      `Listing ${path}`,
      this.content.GET("/volumecontent/{volumeID}/dir", {
        params: { ...params, query: { ...params.query, depth: opts.depth } },
      }),
    );
  }

  makeDir(path: string, opts: VolumeWriteOptions = {}): Promise<VolumeEntry> {
    const params = this.where(path);
    return unwrap(
      `Creating directory ${path}`,
      this.content.POST("/volumecontent/{volumeID}/dir", {
        params: { ...params, query: { ...params.query, ...opts } },
      }),
    );
  }

  /** Writes a file: text, bytes, a Blob or a stream (sent as it is read, never buffered whole). */
  writeFile(
    path: string,
    data: string | ArrayBuffer | Uint8Array | Blob | ReadableStream<Uint8Array>,
    opts: VolumeWriteOptions = {},
  ): Promise<VolumeEntry> {
    const params = this.where(path);
    const streamed = typeof ReadableStream !== "undefined" && data instanceof ReadableStream;
    return unwrap(
      `Writing ${path}`,
      this.content.PUT("/volumecontent/{volumeID}/file", {
        params: { ...params, query: { ...params.query, ...opts } },
        body: data as unknown as string,
        bodySerializer: (b: unknown) => b as BodyInit,
        headers: { "Content-Type": "application/octet-stream" },
        ...(streamed ? { duplex: "half" } : {}),
      } as Parameters<PlatformClient["PUT"]>[1]),
    );
  }

  async readFile(path: string, opts: { format: "bytes" }): Promise<Uint8Array>;
  async readFile(path: string, opts?: { format?: "text" }): Promise<string>;
  async readFile(path: string, opts: { format?: "text" | "bytes" } = {}): Promise<string | Uint8Array> {
    const bytes = await unwrap(
      `Reading ${path}`,
      this.content.GET("/volumecontent/{volumeID}/file", {
        params: this.where(path),
        parseAs: "arrayBuffer",
      }),
    );
    const data = new Uint8Array(bytes as ArrayBuffer);
    return opts.format === "bytes" ? data : new TextDecoder().decode(data);
  }

  updateMetadata(path: string, metadata: Omit<VolumeWriteOptions, "force">): Promise<VolumeEntry> {
    return unwrap(
      `Changing ${path}`,
      this.content.PATCH("/volumecontent/{volumeID}/path", { params: this.where(path), body: metadata }),
    );
  }

  /** Removes a file, a link, or a directory with everything in it. */
  async remove(path: string): Promise<void> {
    await unwrap(
      `Removing ${path}`,
      this.content.DELETE("/volumecontent/{volumeID}/path", { params: this.where(path) }),
    );
  }
}
