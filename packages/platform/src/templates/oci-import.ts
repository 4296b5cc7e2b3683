import { createHash } from "node:crypto";
import { realpath, rm } from "node:fs/promises";
import path from "node:path";
import { command, requireBinary } from "../lib/command.js";
import { InvalidBuild } from "./build-spec.js";
import { LayerStore } from "./layers.js";
import { RootfsView } from "./rootfs-view.js";

/** What `fromImage` names: the platform's base template, or an image on this host's disk. */
export type ImageSource =
  | { kind: "base" }
  | { kind: "local"; transport: "oci" | "oci-archive" | "docker-archive"; path: string; reference?: string };

/** The client's default base image; our `base` template is its counterpart. */
const BASE_IMAGE = /^(docker\.io\/)?e2bdev\/base(:[\w.-]+)?$/;
const LOCAL_IMAGE = /^(oci|oci-archive|docker-archive):(\/[^:]+)(?::([\w.@:/-]+))?$/;

/**
 * Parses `fromImage`. Images come from OCI layouts and archives under `importDir` on the
 * platform host (skopeo transports `oci:`, `oci-archive:`, `docker-archive:`); this platform
 * does not pull from registries, so a registry reference is refused with what to do instead.
 */
export function parseImageSource(fromImage: string, importDir: string): ImageSource {
  if (BASE_IMAGE.test(fromImage)) return { kind: "base" };
  const m = LOCAL_IMAGE.exec(fromImage);
  if (!m) {
    throw new InvalidBuild(
      `cannot use image '${fromImage}': this platform does not pull from registries. Save the image as an OCI ` +
        `layout or archive under ${importDir} on the platform host (e.g. 'skopeo copy docker://${fromImage} ` +
        `oci:${importDir}/name:tag') and build from 'oci:${importDir}/name:tag', 'oci-archive:<file>:<tag>' or ` +
        "'docker-archive:<file>'",
      "base",
    );
  }
  return {
    kind: "local",
    transport: m[1] as "oci" | "oci-archive" | "docker-archive",
    path: m[2]!,
    reference: m[3],
  };
}

/** An imported image: its root filesystem as one layer, and the defaults its config sets. */
export interface ImportedImage {
  layer: string;
  /** Cache key of the image's content, the parent key of the build's first step. */
  key: string;
  user: string;
  workdir?: string;
  envVars: Record<string, string>;
}

interface ImageConfig {
  config?: { User?: string; WorkingDir?: string; Env?: string[] };
}

async function insideDir(file: string, dir: string): Promise<boolean> {
  const [real, root] = await Promise.all([
    realpath(file).catch(() => undefined),
    realpath(dir).catch(() => undefined),
  ]);
  return Boolean(real && root && real.startsWith(`${root}/`));
}

/**
 * Imports a local image with skopeo (any of its transports, normalised to an OCI layout) and
 * umoci (layers applied into one root filesystem, ownership kept). The layer is cached by the
 * manifest's digest, so an unchanged image is unpacked once.
 */
export async function importImage(
  source: Extract<ImageSource, { kind: "local" }>,
  o: { layers: LayerStore; importDir: string; scope: string; log(line: string): void },
): Promise<ImportedImage> {
  if (!(await insideDir(source.path, o.importDir))) {
    throw new InvalidBuild(
      `image path ${source.path} does not exist under ${o.importDir}, the platform's import directory`,
      "base",
    );
  }
  const skopeo = await requireBinary("skopeo", "apt-get install skopeo");
  const ref = `${source.transport}:${source.path}${source.reference ? `:${source.reference}` : ""}`;
  const manifest = await command(skopeo, ["inspect", "--raw", ref]);
  const config = JSON.parse(await command(skopeo, ["inspect", "--config", ref])) as ImageConfig;
  const digest = createHash("sha256").update(manifest).digest("hex");
  const key = LayerStore.key(o.scope, "image", digest);
  if (await o.layers.has(key)) {
    o.log(`image ${ref} (sha256:${digest.slice(0, 12)}) is cached`);
  } else {
    const umoci = await requireBinary("umoci", "apt-get install umoci");
    const staging = await o.layers.staging();
    try {
      o.log(`importing ${ref} (sha256:${digest.slice(0, 12)})`);
      await command(skopeo, ["copy", "--quiet", ref, `oci:${staging}/layout:image`], {
        timeoutMs: 30 * 60_000,
      });
      await command(umoci, ["unpack", "--image", `${staging}/layout:image`, `${staging}/bundle`], {
        timeoutMs: 30 * 60_000,
      });
      await o.layers.commit(path.join(staging, "bundle", "rootfs"), key);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  const layer = o.layers.rel(key);
  const [userPart = ""] = (config.config?.User ?? "").split(":");
  const view = new RootfsView(o.layers.abs(layer));
  const user = userPart ? ((await view.user(userPart))?.name ?? "root") : "root";
  const envVars: Record<string, string> = {};
  for (const entry of config.config?.Env ?? []) {
    const eq = entry.indexOf("=");
    if (eq > 0) envVars[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  const workdir = config.config?.WorkingDir || undefined;
  return { layer, key, user, workdir, envVars };
}
