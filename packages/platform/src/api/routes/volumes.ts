import type { Schemas } from "@x/platform-client";
import { effectiveLimits, type PlatformLimits } from "../../model/team.js";
import type { Volume } from "../../model/volume.js";
import type { Volumes } from "../../volumes/volumes.js";
import type { HandlersFor } from "../handler.js";
import { teamOf } from "./access.js";

type VolumeOps = "listVolumes" | "createVolume" | "getVolume" | "deleteVolume";

/** The volume with its token; never a `domain` (the client would send content calls to `api.<domain>`). */
function withToken(v: Volume): Schemas["VolumeAndToken"] {
  return { volumeID: v.id, name: v.name, token: v.token, sizeMB: v.sizeMB, createdAt: v.createdAt };
}

export interface VolumeRoutesOptions {
  volumes: Volumes;
  /** The platform's limits; a team's own may lower them (how many volumes, how large). */
  limits: PlatformLimits;
}

/** Volumes of the caller's team: create, list, get (with the token), delete. */
export function volumeRoutes({ volumes, limits }: VolumeRoutesOptions): HandlersFor<VolumeOps> {
  return {
    listVolumes: async (r) => ({
      status: 200,
      body: (await volumes.list(teamOf(r))).map((v) => ({
        volumeID: v.id,
        name: v.name,
        sizeMB: v.sizeMB,
        createdAt: v.createdAt,
      })),
    }),
    createVolume: async (r) => {
      const team = teamOf(r);
      const volume = await volumes.create(team, r.body.name, r.body.sizeMB, effectiveLimits(team, limits));
      return { status: 201, body: withToken(volume) };
    },
    getVolume: async (r) => {
      const { volume, usedMB, mountedBy } = await volumes.detail(teamOf(r), r.params.volumeID);
      return { status: 200, body: { ...withToken(volume), usedMB, mountedBy } };
    },
    deleteVolume: async (r) => {
      await volumes.delete(teamOf(r), r.params.volumeID);
      return { status: 204 };
    },
  };
}
