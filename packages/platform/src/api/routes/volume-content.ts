import type { Volumes } from "../../volumes/volumes.js";
import type { ApiRequest, HandlersFor } from "../handler.js";

type ContentOps =
  | "statVolumePath"
  | "updateVolumePathMetadata"
  | "removeVolumePath"
  | "listVolumeDir"
  | "makeVolumeDir"
  | "readVolumeFile"
  | "writeVolumeFile";

/**
 * The content API (`/volumecontent/{volumeID}/…`), as the public client's `Volume` calls it:
 * authorised by the volume's own bearer token, not an API key.
 */
export function volumeContentRoutes(volumes: Volumes): HandlersFor<ContentOps> {
  const open = async (r: Pick<ApiRequest, "req"> & { params: { volumeID: string } }) =>
    volumes.content(await volumes.authorize(r.params.volumeID, r.req.headers.authorization));

  return {
    statVolumePath: async (r) => ({ status: 200, body: await (await open(r)).stat(r.params.path) }),
    updateVolumePathMetadata: async (r) => ({
      status: 200,
      body: await (await open(r)).updateMetadata(r.params.path, r.body),
    }),
    removeVolumePath: async (r) => {
      await (await open(r)).remove(r.params.path);
      return { status: 204 };
    },
    listVolumeDir: async (r) => ({
      status: 200,
      body: await (await open(r)).list(r.params.path, Math.max(r.params.depth ?? 1, 1)),
    }),
    makeVolumeDir: async (r) => ({
      status: 201,
      body: await (await open(r)).makeDir(r.params.path, r.params),
    }),
    writeVolumeFile: async (r) => ({
      status: 201,
      body: await (await open(r)).writeFile(r.params.path, r.req, r.params),
    }),
    readVolumeFile: async (r) => {
      const { size, stream } = await (await open(r)).readFile(r.params.path);
      r.res.writeHead(200, { "Content-Type": "application/octet-stream", "Content-Length": String(size) });
      stream.pipe(r.res);
      r.res.once("close", () => stream.destroy());
      return undefined;
    },
  };
}
