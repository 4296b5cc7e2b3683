import type { RuntimeName } from "../runtime/container-runtime.js";
import type { BuildRow } from "../store/index.js";

/**
 * What a sandbox of a build starts with, kept in the build's `spec` JSON (the orchestrator
 * reads it): default user and working directory, environment, start and ready commands.
 */
export interface RuntimeSpec {
  user: string;
  workdir?: string;
  envVars: Record<string, string>;
  startCmd?: string;
  readyCmd?: string;
}

/** What a memory snapshot's build keeps besides its layers (in its spec). */
export interface MemoryImage {
  /** The checkpoint image, relative to the data directory (stored beside the layers). */
  image: string;
  /** Runtime that wrote it; only that runtime restores it. */
  runtime: RuntimeName;
  /** The envd token in the image's memory: a restored sandbox is handed its own through it. */
  accessToken: string;
}

/** The memory image of a memory snapshot's build; undefined for every other build. */
export function memoryImageOf(build: Pick<BuildRow, "spec" | "snapshot_kind">): MemoryImage | undefined {
  if (build.snapshot_kind !== "memory") return undefined;
  return (JSON.parse(build.spec) as { memory?: MemoryImage }).memory;
}

export function runtimeSpecOf(build: Pick<BuildRow, "spec">): RuntimeSpec {
  const spec = JSON.parse(build.spec) as Partial<RuntimeSpec>;
  return {
    user: spec.user ?? "user",
    workdir: spec.workdir,
    envVars: spec.envVars ?? {},
    startCmd: spec.startCmd,
    readyCmd: spec.readyCmd,
  };
}

/** A step as the client sends it (`TemplateStep` of openapi.yaml). */
export interface RawStep {
  type: "RUN" | "COPY" | "ENV" | "WORKDIR" | "USER";
  args?: string[];
  force?: boolean;
  filesHash?: string;
}

/** The body of `POST /v2/templates/{templateID}/builds/{buildID}`. */
export interface BuildStartRequest {
  fromImage?: string;
  fromTemplate?: string;
  fromImageRegistry?: unknown;
  steps?: RawStep[];
  startCmd?: string;
  readyCmd?: string;
  force?: boolean;
}

export type Step = { force: boolean; raw: RawStep } & (
  | { type: "RUN"; cmd: string; user?: string }
  | { type: "COPY"; src: string; dest: string; owner: string; mode?: number; filesHash: string }
  | { type: "ENV"; vars: [string, string][] }
  | { type: "WORKDIR"; dir: string }
  | { type: "USER"; user: string }
);

/** A build request that cannot be built; `step` is the 1-based step it is about, as the client expects. */
export class InvalidBuild extends Error {
  constructor(
    message: string,
    readonly step?: string,
  ) {
    super(message);
    this.name = "InvalidBuild";
  }
}

const USER = /^[a-z_][a-z0-9_.-]{0,31}$/;
const OWNER = /^([a-z_][a-z0-9_.-]{0,31}|\d+)(:([a-z_][a-z0-9_.-]{0,31}|\d+))?$/;
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
const FILES_HASH = /^[0-9a-f]{64}$/;

function parseStep(raw: RawStep, n: string): Step {
  const args = raw.args ?? [];
  const fail = (message: string): never => {
    throw new InvalidBuild(`step ${n} (${raw.type}): ${message}`, n);
  };
  const common = { force: raw.force ?? false, raw };
  switch (raw.type) {
    case "RUN": {
      const [cmd, user] = args;
      if (!cmd?.trim()) fail("needs a command");
      if (user && !USER.test(user)) fail(`'${user}' is not a valid user name`);
      return { ...common, type: "RUN", cmd: cmd!, user: user || undefined };
    }
    case "COPY": {
      const [src, dest, owner = "", mode = ""] = args;
      if (!src || !dest) fail("needs a source and a destination");
      if (owner && !OWNER.test(owner)) fail(`'${owner}' is not a valid user[:group]`);
      if (mode && !/^[0-7]{1,4}$/.test(mode)) fail(`mode '${mode}' is not an octal permission`);
      if (!raw.filesHash || !FILES_HASH.test(raw.filesHash))
        fail("needs the filesHash of its uploaded files");
      return {
        ...common,
        type: "COPY",
        src: src!,
        dest: dest!,
        owner,
        mode: mode ? Number.parseInt(mode, 8) : undefined,
        filesHash: raw.filesHash!,
      };
    }
    case "ENV": {
      if (args.length === 0 || args.length % 2 !== 0) fail("needs name and value pairs");
      const vars: [string, string][] = [];
      for (let i = 0; i < args.length; i += 2) {
        if (!ENV_NAME.test(args[i]!)) fail(`'${args[i]}' is not a valid variable name`);
        vars.push([args[i]!, args[i + 1]!]);
      }
      return { ...common, type: "ENV", vars };
    }
    case "WORKDIR": {
      const [dir] = args;
      if (!dir?.trim()) fail("needs a directory");
      return { ...common, type: "WORKDIR", dir: dir! };
    }
    case "USER": {
      const [user] = args;
      if (!user || !USER.test(user)) fail(`'${user ?? ""}' is not a valid user name`);
      return { ...common, type: "USER", user: user! };
    }
  }
}

export function parseSteps(raw: readonly RawStep[]): Step[] {
  return raw.map((step, i) => parseStep(step, String(i + 1)));
}
