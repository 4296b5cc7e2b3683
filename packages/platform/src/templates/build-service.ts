import { mkdir } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../lib/log.js";
import type { RuntimeName } from "../model/sandbox.js";
import type { SandboxHost } from "../sandbox/sandbox-host.js";
import type { Store } from "../store/index.js";
import type { BuildLogLimits } from "./build-log.js";
import { Builder } from "./builder.js";
import { LayerStore } from "./layers.js";
import { RegistryCache } from "./registry/pull.js";
import { registrySettings } from "./registry/settings.js";
import { BuildUploads } from "./uploads.js";

/** Largest COPY archive the platform accepts. */
export const MAX_UPLOAD_BYTES = 8 * 1024 ** 3;

export interface BuildService {
  builder: Builder;
  uploads: BuildUploads;
  layers: LayerStore;
  /** `<dataDir>/import`: the only place `fromImage` reads OCI layouts and archives from. */
  importDir: string;
  maxUploadBytes: number;
}

/**
 * The template build machinery of one platform process: layers, uploads and the builder,
 * which runs build steps in sandboxes of `runtime`. Builds a previous process left unfinished
 * are failed first.
 */
export async function createBuildService(o: {
  store: Store;
  host: SandboxHost;
  runtime: RuntimeName;
  dataDir: string;
  /** Names this platform's own layers (see LayerStore). */
  owner: string;
  /** Told of every layer committed (see LayerStore). */
  onLayer?(rel: string): Promise<void>;
  /** Mirrors (`REGISTRY=MIRROR`) and insecure registries (`host[:port]`) for pulling images. */
  registryMirrors?: readonly string[];
  insecureRegistries?: readonly string[];
  /** Internal registries pulls may reach (`HOST[:PORT]` or a CIDR); every other internal address is refused. */
  allowPrivateRegistries?: readonly string[];
  /** Mirrors trusted with teams' registry credentials (`host[:port]`). */
  credentialMirrors?: readonly string[];
  /** Every address of a name (A and AAAA); the host's resolver when unset. */
  resolveHost?(name: string): Promise<string[]>;
  /** How much of its commands' output one build's log keeps. */
  buildLogLimits?: BuildLogLimits;
  log: Logger;
}): Promise<BuildService> {
  const layers = new LayerStore(o.dataDir, o.owner, o.onLayer);
  const uploads = await BuildUploads.open(o.dataDir);
  const importDir = path.join(o.dataDir, "import");
  await mkdir(importDir, { recursive: true });
  const settings = registrySettings({
    mirrors: o.registryMirrors,
    insecure: o.insecureRegistries,
    allowPrivate: o.allowPrivateRegistries,
    credentialMirrors: o.credentialMirrors,
  });
  const registries = new RegistryCache(path.join(o.dataDir, "images", "registry"), settings, {
    ...(o.resolveHost ? { resolve: o.resolveHost } : {}),
    log: o.log.child({ component: "registry" }),
  });
  const builder = new Builder({
    store: o.store,
    host: o.host,
    runtime: o.runtime,
    layers,
    uploads,
    importDir,
    registries,
    ...(o.buildLogLimits ? { logLimits: o.buildLogLimits } : {}),
    log: o.log,
  });
  await builder.recover();
  const swept = await layers.sweepOrphans(await o.store.templates.referencedLayers());
  if (swept.length > 0) o.log.info({ layers: swept }, "removed layers a cut-short snapshot or copy left");
  return { builder, uploads, layers, importDir, maxUploadBytes: MAX_UPLOAD_BYTES };
}
