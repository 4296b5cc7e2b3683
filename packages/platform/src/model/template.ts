import type { RuntimeName } from "./sandbox.js";

/** Alias of the public template every sandbox starts from unless told otherwise. */
export const BASE_ALIAS = "base";

/**
 * Templates whose definitions ship with the platform (the repository's templates/ folder) and
 * that an operator installs with `x template install NAME`: the ones @e2b/code-interpreter,
 * @e2b/desktop and the public client's `Sandbox.create({ mcp })` ask for by these names.
 */
export const SHIPPED_TEMPLATES = ["code-interpreter-v1", "desktop", "mcp-gateway"] as const;

export type ShippedTemplateName = (typeof SHIPPED_TEMPLATES)[number];

export function isShippedTemplate(name: string): name is ShippedTemplateName {
  return (SHIPPED_TEMPLATES as readonly string[]).includes(name);
}

/**
 * Names only the system team may give a template: `base` and the shipped ones, so that no team
 * can take one before the operator installs it. Unqualified, they resolve to the system team's
 * first.
 */
export const RESERVED_TEMPLATE_NAMES: readonly string[] = [BASE_ALIAS, ...SHIPPED_TEMPLATES];

export function isReservedTemplateName(name: string): boolean {
  return RESERVED_TEMPLATE_NAMES.includes(name);
}

/** What a create of a shipped template that is not installed is told. */
export function notInstalledMessage(name: string): string {
  return `template '${name}' is not installed on this platform: its operator installs it with 'x template install ${name}' (or starts 'x serve --templates ${name}' to keep it built)`;
}

/** The tag a build gets when none is named, and what a name without a tag means. */
export const DEFAULT_TAG = "default";

export interface Template {
  id: string;
  teamId: string;
  public: boolean;
  createdAt: string;
  updatedAt: string;
  lastSpawnedAt: string | null;
  spawnCount: number;
  /** Its own bounds of the warm pool of its builds, where it has any. */
  warmPool?: { min?: number; max?: number };
}

export type BuildStatus = "waiting" | "building" | "ready" | "error";

/** What a sandbox of a build starts with: default user and working directory, environment, start and ready commands. */
export interface RuntimeSpec {
  user: string;
  workdir?: string;
  envVars: Record<string, string>;
  startCmd?: string;
  readyCmd?: string;
}

/** What a memory snapshot's build keeps besides its layers. */
export interface MemoryImage {
  /** The checkpoint image, relative to the data directory (stored beside the layers). */
  image: string;
  /** Runtime that wrote it; only that runtime restores it. */
  runtime: RuntimeName;
  /** The envd token in the image's memory: a restored sandbox is handed its own through it. */
  accessToken: string;
}

/**
 * Everything a build records about itself besides its layers: the runtime spec once built, the
 * tags it is to get, the request it was built from, and for snapshots their source and memory.
 */
export interface BuildSpec extends Partial<RuntimeSpec> {
  tags?: string[];
  /** The build request as the client sent it (kept for inspection). */
  request?: unknown;
  snapshotOf?: { sandboxId: string; buildId: string };
  memory?: MemoryImage;
  /** What a built-in image (the `base` template) was made with, and its recipe's hash. */
  from?: string;
  recipe?: string;
}

export interface Build {
  id: string;
  templateId: string;
  status: BuildStatus;
  /** Why it failed, and at which step (1-based, `base` or `finalize`), when status is error. */
  reason?: { message: string; step?: string };
  createdAt: string;
  updatedAt: string;
  finishedAt?: string;
  cpuCount: number;
  memoryMB: number;
  diskSizeMB: number;
  envdVersion: string;
  spec: BuildSpec;
  /** Layers relative to the data directory, topmost first, once built. */
  layers: string[];
  /** `files` for a filesystem snapshot, `memory` when a checkpoint image is kept with it. */
  snapshotKind?: "files" | "memory";
  /** The node that builds (built) it. */
  nodeId?: string;
}

/** The runtime spec of a build, with its defaults. */
export function runtimeSpecOf(build: Pick<Build, "spec">): RuntimeSpec {
  const { spec } = build;
  return {
    user: spec.user ?? "user",
    workdir: spec.workdir,
    envVars: spec.envVars ?? {},
    startCmd: spec.startCmd,
    readyCmd: spec.readyCmd,
  };
}

/** The memory image of a memory snapshot's build; undefined for every other build. */
export function memoryImageOf(build: Pick<Build, "spec" | "snapshotKind">): MemoryImage | undefined {
  return build.snapshotKind === "memory" ? build.spec.memory : undefined;
}

/** A parsed template reference: `id`, `alias`, `namespace/alias`, each optionally `:tag`. */
export interface TemplateRef {
  namespace?: string;
  name: string;
  tag?: string;
}

export function parseTemplateRef(ref: string): TemplateRef {
  const colon = ref.lastIndexOf(":");
  const nameAndNs = colon > 0 ? ref.slice(0, colon) : ref;
  const tag = colon > 0 ? ref.slice(colon + 1) : undefined;
  const slash = nameAndNs.indexOf("/");
  return slash > 0
    ? { namespace: nameAndNs.slice(0, slash), name: nameAndNs.slice(slash + 1), tag }
    : { name: nameAndNs, tag };
}

export interface BuildLogEntry {
  timestamp: string;
  level: string;
  message: string;
  step?: string;
}
