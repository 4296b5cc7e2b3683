import { randomUUID, timingSafeEqual } from "node:crypto";
import path from "node:path";
import { newSecret, nowIso } from "../lib/ids.js";
import { KeyedLock } from "../lib/keyed-lock.js";
import type { Logger } from "../lib/log.js";
import { conflict, invalid, notFound, unauthenticated } from "../model/errors.js";
import { checkRoom, type PlatformLimits, type Team } from "../model/team.js";
import { isValidVolumeName, mountPathProblem, type Volume, type VolumeMount } from "../model/volume.js";
import type { Store } from "../store/index.js";
import { VolumeContent } from "./volume-content.js";
import {
  createVolumeDisk,
  mountVolumeDisk,
  removeVolumeDisk,
  unmountVolumeDisk,
  volumeDisk,
  volumeUsedMB,
} from "./volume-disk.js";

export interface VolumesOptions {
  store: Store;
  dataDir: string;
  /** Size of a volume whose create does not say. */
  defaultSizeMB: number;
  log: Logger;
}

/** What the API shows of a volume besides its record. */
export interface VolumeDetail {
  volume: Volume;
  usedMB: number;
  /** Sandboxes not killed that mount it. */
  mountedBy: string[];
}

/**
 * Volumes: records in the store, files on this host (volume-disk.ts). Every change to one
 * volume's files (mount, delete) runs under that volume's lock, so a delete cannot pull the
 * files from under a sandbox that is being given them.
 */
export class Volumes {
  private readonly lock = new KeyedLock();
  private readonly teamLock = new KeyedLock();
  /** Volumes this process has mounted (both views), so a content call does not check again. */
  private readonly mountedIds = new Set<string>();

  constructor(private readonly o: VolumesOptions) {}

  private disk(id: string) {
    return volumeDisk(this.o.dataDir, id);
  }

  /**
   * A new volume of `sizeMB` (the platform's default, or the team's largest when that is
   * smaller): 400 past the team's largest, 403 when it holds as many volumes as it may.
   */
  async create(
    team: Team,
    name: string,
    asked: number | undefined,
    limits: Pick<PlatformLimits, "volumes" | "volumeSizeMB">,
  ): Promise<Volume> {
    if (!isValidVolumeName(name)) {
      throw invalid(`Invalid volume name '${name}': use letters, digits, '_' and '-' (at most 128)`);
    }
    const sizeMB = asked ?? Math.min(this.o.defaultSizeMB, limits.volumeSizeMB);
    if (!Number.isInteger(sizeMB) || sizeMB < 16)
      throw invalid(`sizeMB must be an integer ≥ 16, got ${sizeMB}`);
    if (sizeMB > limits.volumeSizeMB)
      throw invalid(
        `sizeMB must be at most ${limits.volumeSizeMB} (the team's limit of one volume's size), got ${sizeMB}`,
      );
    // one create of the team at a time here, so that two cannot both take its last place
    return this.teamLock.run(team.id, async () => {
      checkRoom(await this.o.store.volumes.count(team.id), limits.volumes, "volumes", "delete one");
      return this.createDisk(team, name, sizeMB);
    });
  }

  private async createDisk(team: Team, name: string, sizeMB: number): Promise<Volume> {
    if (await this.o.store.volumes.byName(team.id, name)) {
      throw invalid(`Volume with name '${name}' already exists`);
    }
    const volume: Volume = {
      id: randomUUID(),
      teamId: team.id,
      name,
      sizeMB,
      token: `vol_${newSecret()}`,
      createdAt: nowIso(),
    };
    const disk = this.disk(volume.id);
    // files first: a record always has its files; files without a record are swept at start
    await createVolumeDisk(disk, sizeMB, path.join(this.o.dataDir, "disks"));
    if (!(await this.o.store.volumes.insert(volume))) {
      await removeVolumeDisk(disk);
      throw invalid(`Volume with name '${name}' already exists`);
    }
    this.o.log.info({ volumeId: volume.id, name, sizeMB }, "volume created");
    return volume;
  }

  list(team: Team): Promise<Volume[]> {
    return this.o.store.volumes.list(team.id);
  }

  /** The team's volume; any id that is not one is a 404. */
  async get(team: Team, id: string): Promise<Volume> {
    const volume = await this.o.store.volumes.get(id);
    if (!volume || volume.teamId !== team.id) throw notFound(`volume '${id}' not found`);
    return volume;
  }

  async detail(team: Team, id: string): Promise<VolumeDetail> {
    const volume = await this.get(team, id);
    const mountedBy = (await this.o.store.sandboxes.mounting(team.id, id)).map((s) => s.id);
    await this.mounted(volume);
    return { volume, usedMB: await volumeUsedMB(this.disk(id)), mountedBy };
  }

  /** Deletes the volume and its files; 409 while a sandbox that is not killed mounts it. */
  async delete(team: Team, id: string): Promise<void> {
    const volume = await this.get(team, id);
    await this.lock.run(id, async () => {
      const users = await this.o.store.sandboxes.mounting(team.id, id);
      if (users.length > 0) {
        throw conflict(
          `volume '${volume.name}' is mounted by ${users.map((s) => `${s.id} (${s.state})`).join(", ")}: kill them first`,
        );
      }
      await this.o.store.volumes.delete(id);
      this.mountedIds.delete(id);
      await removeVolumeDisk(this.disk(id));
    });
    this.o.log.info({ volumeId: id, name: volume.name }, "volume deleted");
  }

  /** The volume a content call's bearer token opens; 401 for anything else (even a gone volume). */
  async authorize(id: string, authorization: string | undefined): Promise<Volume> {
    const m = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? "");
    if (!m) throw unauthenticated("missing volume token: send it as 'Authorization: Bearer <token>'");
    const volume = await this.o.store.volumes.get(id);
    const given = Buffer.from(m[1]!);
    const expected = Buffer.from(volume?.token ?? "");
    if (!volume || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      throw unauthenticated(`the token does not open volume '${id}' (or the volume was deleted)`);
    }
    return volume;
  }

  private async mounted(volume: Volume): Promise<void> {
    if (this.mountedIds.has(volume.id)) return;
    await this.lock.run(volume.id, async () => {
      if (this.mountedIds.has(volume.id)) return;
      // deleted while we waited for the lock
      if (!(await this.o.store.volumes.get(volume.id))) throw notFound(`volume '${volume.name}' was deleted`);
      await mountVolumeDisk(this.disk(volume.id));
      this.mountedIds.add(volume.id);
    });
  }

  /** The volume's files for the content API, mounted. */
  async content(volume: Volume): Promise<VolumeContent> {
    await this.mounted(volume);
    return new VolumeContent(this.disk(volume.id).content, `volume '${volume.name}'`, volume.sizeMB);
  }

  /** Where a sandbox binds the volume from, mounted; the volume must still exist. */
  async source(volumeId: string): Promise<string> {
    const volume = await this.o.store.volumes.get(volumeId);
    if (!volume) throw notFound(`volume ${volumeId} was deleted: the sandbox cannot mount it`);
    await this.mounted(volume);
    return this.disk(volumeId).data;
  }

  /**
   * A create's `volumeMounts`, checked all at once: every problem of every mount in one 400,
   * as E2B words it.
   */
  async resolveMounts(
    team: Team,
    mounts: ReadonlyArray<{ name: string; path: string }>,
  ): Promise<VolumeMount[]> {
    const problems: string[] = [];
    const out: VolumeMount[] = [];
    const seen = new Set<string>();
    for (const [i, m] of mounts.entries()) {
      const volume = await this.o.store.volumes.byName(team.id, m.name);
      if (!volume) problems.push(`volume mount #${i}: volume '${m.name}' not found`);
      const pathProblem = mountPathProblem(m.path);
      if (pathProblem) problems.push(`volume mount #${i}: ${pathProblem}`);
      else if (seen.has(m.path)) problems.push(`volume mount #${i}: path '${m.path}' is mounted twice`);
      else if ([...seen].some((p) => m.path.startsWith(`${p}/`) || p.startsWith(`${m.path}/`))) {
        problems.push(`volume mount #${i}: path '${m.path}' is inside another mount (or holds one)`);
      }
      seen.add(m.path);
      if (volume && !pathProblem) out.push({ volumeId: volume.id, name: volume.name, path: m.path });
    }
    if (problems.length > 0) throw invalid(`invalid mounts:\n\t- ${problems.join("\n\t- ")}`);
    return out;
  }

  /**
   * Unmounts the host views of volumes no sandbox mounts. Those a sandbox binds stay: an
   * unmount here would propagate into the sandbox's own mounts (runtimes keep them as slaves
   * of the host's), and the next start adopts the sandbox with its volume.
   */
  async close(): Promise<void> {
    for (const volume of await this.o.store.volumes.all()) {
      const users = await this.o.store.sandboxes.mounting(volume.teamId, volume.id);
      if (users.length > 0) continue;
      await this.lock
        .run(volume.id, async () => {
          this.mountedIds.delete(volume.id);
          await unmountVolumeDisk(this.disk(volume.id));
        })
        .catch((err: unknown) => this.o.log.warn({ err, volumeId: volume.id }, "unmounting a volume failed"));
    }
  }
}
