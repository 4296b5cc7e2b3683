import { createHash } from "node:crypto";
import { realpath, rm } from "node:fs/promises";
import path from "node:path";
import { command, requireBinary } from "../lib/command.js";
import { type BuildStartRequest, InvalidBuild } from "./build-spec.js";
import { LayerStore } from "./layers.js";
import {
  type ImageConfig,
  PullError,
  type RegistryCache,
  type RegistryCredentials,
} from "./registry/pull.js";
import { formatReference, type ImageReference, parseImageReference } from "./registry/reference.js";
import { RootfsView } from "./rootfs-view.js";

/** What `fromImage` names: the platform's base template, an image on this host's disk, or one in a registry. */
export type ImageSource =
  | { kind: "base" }
  | { kind: "local"; transport: "oci" | "oci-archive" | "docker-archive"; path: string; reference?: string }
  | { kind: "registry"; reference: ImageReference; credentials?: RegistryCredentials };

/** The client's default base image; our `base` template is its counterpart. */
const BASE_IMAGE = /^(docker\.io\/)?e2bdev\/base(:[\w.-]+)?$/;
const LOCAL_TRANSPORT = /^(oci|oci-archive|docker-archive):/;
const LOCAL_IMAGE = /^(oci|oci-archive|docker-archive):(\/[^:]+)(?::([\w.@:/-]+))?$/;
/** An image's manifest or config as skopeo prints it: 4 MiB, the size registries accept for a manifest. */
export const IMAGE_JSON_MAX_BYTES = 4 * 1024 * 1024;
/** What skopeo copy and umoci unpack may print (an image's files decide their warnings). */
const TOOL_OUTPUT_MAX_BYTES = 1024 * 1024;

/**
 * Credentials of `fromImageRegistry` as a registry login. A GCP service account key is the
 * password of the user `_json_key`, as Google's registries document; AWS keys would need an
 * ECR token exchange (a signed AWS API call) that this platform does not make.
 */
function credentialsOf(registry: BuildStartRequest["fromImageRegistry"]): RegistryCredentials | undefined {
  switch (registry?.type) {
    case undefined:
      return undefined;
    case "registry":
      return { username: registry.username, password: registry.password };
    case "gcp":
      return { username: "_json_key", password: registry.serviceAccountJson };
    case "aws":
      throw new InvalidBuild(
        "fromAWSRegistry is not supported by this platform: it does not exchange AWS keys for an ECR token. " +
          "Get one with 'aws ecr get-login-password --region REGION' and pass it as " +
          "fromImage(image, { username: 'AWS', password: TOKEN })",
        "base",
      );
  }
}

/**
 * Parses `fromImage`: `e2bdev/base` is the base template; `oci:`, `oci-archive:` and
 * `docker-archive:` name layouts and archives under `importDir` on the platform host; anything
 * else is a registry reference (`python:3.12`, `host:port/ns/img:tag`, `img@sha256:…`), pulled
 * with the credentials of `fromImageRegistry` when the client sends them.
 */
export function parseImageSource(
  fromImage: string,
  importDir: string,
  registry?: BuildStartRequest["fromImageRegistry"],
): ImageSource {
  if (BASE_IMAGE.test(fromImage)) return { kind: "base" };
  if (LOCAL_TRANSPORT.test(fromImage)) {
    const m = LOCAL_IMAGE.exec(fromImage);
    if (!m) {
      throw new InvalidBuild(
        `cannot use image '${fromImage}': name a layout or archive by its absolute path under ${importDir}, ` +
          "as 'oci:<dir>:<tag>', 'oci-archive:<file>:<tag>' or 'docker-archive:<file>'",
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
  const reference = parseImageReference(fromImage);
  if (!reference) {
    throw new InvalidBuild(
      `'${fromImage}' is not an image reference: name one as Docker does, e.g. 'python:3.12', ` +
        "'registry.example.com:5000/team/app:1.0' or 'name@sha256:<digest>'",
      "base",
    );
  }
  const credentials = credentialsOf(registry);
  return { kind: "registry", reference, ...(credentials ? { credentials } : {}) };
}

/** How a build's log names its image. */
export function describeImageSource(source: Exclude<ImageSource, { kind: "base" }>): string {
  if (source.kind === "registry") return formatReference(source.reference);
  return `${source.transport}:${source.path}${source.reference ? `:${source.reference}` : ""}`;
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

export interface ImportOptions {
  layers: LayerStore;
  importDir: string;
  registries: RegistryCache;
  /** The team's id: its cache entries' scope, and which of `teams/<id>/` under `importDir` it may read. */
  scope: string;
  log(line: string): void;
  signal?: AbortSignal;
}

/** Where teams' own images are kept in the import directory: `teams/<team id>/…`, each readable by its team alone. */
export const TEAM_IMPORTS = "teams";

/**
 * Whether a team may import `file`: it lies (links resolved) under the import directory, and
 * not under another team's `teams/<id>/`. The rest of the directory is the operator's images
 * for every team.
 */
async function importable(file: string, dir: string, teamId: string): Promise<boolean> {
  const [real, root] = await Promise.all([
    realpath(file).catch(() => undefined),
    realpath(dir).catch(() => undefined),
  ]);
  if (!real || !root || !real.startsWith(`${root}/`)) return false;
  const [first, owner] = path.relative(root, real).split(path.sep);
  return first !== TEAM_IMPORTS || owner === teamId;
}

/**
 * The image's root filesystem (its layers applied by umoci, ownership kept) as the layer of
 * `key`, unless an earlier import made it. `raw unpack` writes the root filesystem only: the
 * runtime config umoci would generate from the image is not ours to use.
 */
async function unpack(image: string, key: string, o: ImportOptions): Promise<void> {
  const umoci = await requireBinary("umoci", "apt-get install umoci");
  const staging = await o.layers.staging();
  try {
    const rootfs = path.join(staging, "rootfs");
    await command(umoci, ["raw", "unpack", "--image", image, rootfs], {
      timeoutMs: 30 * 60_000,
      maxOutputBytes: TOOL_OUTPUT_MAX_BYTES,
    });
    await o.layers.commit(rootfs, key);
  } finally {
    await rm(staging, { recursive: true, force: true });
  }
}

/**
 * What the image's config sets, applied as Docker would: Env, WorkingDir and User (which must
 * be an account of the image, as `docker run` requires). Entrypoint and Cmd are not used: a
 * template's start command is its own (`setStartCmd`), and envd is the sandbox's init.
 */
async function imageDefaults(
  layer: string,
  config: ImageConfig,
  o: ImportOptions,
): Promise<Pick<ImportedImage, "user" | "workdir" | "envVars">> {
  const [userPart = ""] = (config.config?.User ?? "").split(":");
  let user = "root";
  if (userPart) {
    const account = await new RootfsView(o.layers.abs(layer)).user(userPart);
    if (!account)
      throw new InvalidBuild(`the image's USER '${userPart}' is not an account in its /etc/passwd`, "base");
    user = account.name;
  }
  const envVars: Record<string, string> = {};
  for (const entry of config.config?.Env ?? []) {
    const eq = entry.indexOf("=");
    if (eq > 0) envVars[entry.slice(0, eq)] = entry.slice(eq + 1);
  }
  return { user, workdir: config.config?.WorkingDir || undefined, envVars };
}

/**
 * Imports an image: a local one with skopeo (any of its transports, normalised to an OCI
 * layout), a registry's through the shared cache of pulled images. The root filesystem is
 * cached by the manifest's digest (per team), so an unchanged image is unpacked once.
 */
export async function importImage(
  source: Exclude<ImageSource, { kind: "base" }>,
  o: ImportOptions,
): Promise<ImportedImage> {
  if (source.kind === "registry") return importFromRegistry(source, o);
  // another team's images answer as none would: their names are not for this team to learn
  if (!(await importable(source.path, o.importDir, o.scope))) {
    throw new InvalidBuild(
      `image path ${source.path} does not exist under ${o.importDir}, the platform's import directory`,
      "base",
    );
  }
  const skopeo = await requireBinary("skopeo", "apt-get install skopeo");
  const ref = describeImageSource(source);
  const manifest = await command(skopeo, ["inspect", "--raw", ref], { maxOutputBytes: IMAGE_JSON_MAX_BYTES });
  const config = JSON.parse(
    await command(skopeo, ["inspect", "--config", ref], { maxOutputBytes: IMAGE_JSON_MAX_BYTES }),
  ) as ImageConfig;
  const digest = createHash("sha256").update(manifest).digest("hex");
  const key = LayerStore.key(o.scope, "image", digest);
  if (await o.layers.has(key)) {
    o.log(`image ${ref} (sha256:${digest.slice(0, 12)}) is cached`);
  } else {
    const staging = await o.layers.staging();
    try {
      o.log(`importing ${ref} (sha256:${digest.slice(0, 12)})`);
      await command(skopeo, ["copy", "--quiet", ref, `oci:${staging}/layout:image`], {
        timeoutMs: 30 * 60_000,
        maxOutputBytes: TOOL_OUTPUT_MAX_BYTES,
      });
      await unpack(`${staging}/layout:image`, key, o);
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }
  const layer = o.layers.rel(key);
  return { layer, key, ...(await imageDefaults(layer, config, o)) };
}

async function importFromRegistry(
  source: Extract<ImageSource, { kind: "registry" }>,
  o: ImportOptions,
): Promise<ImportedImage> {
  const pulled = await o.registries
    .withImage(
      source.reference,
      { credentials: source.credentials, log: o.log, signal: o.signal },
      async (image) => {
        const digest = image.manifestDigest.replace(/^sha256:/, "");
        const key = LayerStore.key(o.scope, "image", digest);
        if (await o.layers.has(key)) {
          o.log(`root filesystem of ${image.manifestDigest.slice(0, 19)} is cached`);
        } else {
          o.log(`unpacking ${image.manifestDigest.slice(0, 19)}`);
          await unpack(image.image, key, o);
        }
        return { key, config: image.config };
      },
    )
    .catch((err: unknown) => {
      // a pull's failure is the user's to fix: a build error in their words, not a stack
      if (err instanceof PullError) throw new InvalidBuild(err.message, "base");
      throw err;
    });
  const layer = o.layers.rel(pulled.key);
  return { layer, key: pulled.key, ...(await imageDefaults(layer, pulled.config, o)) };
}
