import type { Schemas } from "@x/platform-client";
import { DomainError } from "../model/errors.js";
import { invalidSource } from "./copy-step.js";

/** A step as the client sends it. */
export type RawStep = Schemas["TemplateStep"];

/** The body of `POST /v2/templates/{templateID}/builds/{buildID}`. */
export type BuildStartRequest = Schemas["TemplateBuildStartV2"];

export type Step = { force: boolean; raw: RawStep } & (
  | { type: "RUN"; cmd: string; user?: string }
  | { type: "COPY"; src: string; dest: string; owner: string; mode?: number; filesHash: string }
  | { type: "ENV"; vars: [string, string][] }
  | { type: "WORKDIR"; dir: string }
  | { type: "USER"; user: string }
);

/** A build request that cannot be built; `step` is the 1-based step it is about, as the client expects. */
export class InvalidBuild extends DomainError {
  constructor(
    message: string,
    readonly step?: string,
  ) {
    super("invalid", message);
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
      const badSource = invalidSource(src!);
      if (badSource) fail(badSource);
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
