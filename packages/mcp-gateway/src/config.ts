import path from "node:path";
import { CATALOG, catalogServer, type ServerOptions } from "./catalog.js";
import { isLabel, NAME_SEPARATOR, toLabel } from "./names.js";

/**
 * What `mcp-gateway --config '<json>'` is given (`Sandbox.create({ mcp })` of the public
 * client): an object of servers by name. A name of the catalog takes that server's options;
 * `github/<owner>/<repo>` (E2B's form) clones the repository, runs `installCmd` in it and
 * `runCmd` as a stdio server; `custom/<name>` runs `runCmd` as a stdio server with no clone.
 */
export interface ServerPlan {
  /** The server's name in the config. */
  key: string;
  /** What its tools, prompts and resources are prefixed with (names.ts). */
  label: string;
  title: string;
  command: string;
  args: string[];
  env: Record<string, string>;
  cwd?: string;
  /** Done before the server starts: a clone (when its directory is not there yet), then a command. */
  prepare?: { cloneUrl?: string; dir: string; installCmd?: string };
}

export interface PlanContext {
  /** The node that runs the catalog's servers (the gateway's own). */
  nodePath: string;
  /** Where the catalog's bundles are: `<serversDir>/<name>/bundle.mjs`. */
  serversDir: string;
  /** Where servers keep what they write, and where GitHub servers are cloned. */
  dataDir: string;
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(
      problems.length === 1
        ? problems[0]
        : `the MCP config has ${problems.length} problems:\n${problems.map((p) => `- ${p}`).join("\n")}`,
    );
    this.name = "ConfigError";
  }
}

/**
 * How commands of the config run: bash without its start-up files (it would read ~/.bashrc,
 * taking the socket pair of its standard streams for a remote shell's connection).
 */
export const BASH = ["--norc", "--noprofile", "-c"];

const GITHUB_KEY = /^github\/([A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)\/([A-Za-z0-9._-]+)$/;
const CUSTOM_KEY = /^custom\/(.+)$/;
const COMMAND_FIELDS = ["runCmd", "installCmd", "envs"];

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

/** The servers a config asks for, checked: every problem is named at once, or none starts. */
export function planServers(config: unknown, ctx: PlanContext): ServerPlan[] {
  if (!isObject(config)) {
    throw new ConfigError([
      'the MCP config must be a JSON object of servers by name, e.g. {"memory": {}, "filesystem": {"paths": ["/home/user"]}}',
    ]);
  }
  const problems: string[] = [];
  const plans: ServerPlan[] = [];
  for (const [key, value] of Object.entries(config)) {
    const plan = planOne(key, value, ctx, problems);
    if (plan) plans.push(plan);
  }
  if (Object.keys(config).length === 0) problems.push("the MCP config names no server");
  const byLabel = new Map<string, string>();
  for (const plan of plans) {
    const other = byLabel.get(plan.label);
    if (other !== undefined) {
      problems.push(
        `'${other}' and '${plan.key}' would both name their tools '${plan.label}${NAME_SEPARATOR}…': rename one of them`,
      );
    } else byLabel.set(plan.label, plan.key);
  }
  if (problems.length > 0) throw new ConfigError(problems);
  return plans;
}

function planOne(key: string, value: unknown, ctx: PlanContext, problems: string[]): ServerPlan | undefined {
  const server = catalogServer(key);
  if (server) {
    const options = checkOptions(key, value, server.options, server.required, problems);
    if (!options) return undefined;
    const launch = server.launch(options, { dataDir: ctx.dataDir });
    return {
      key,
      label: key,
      title: server.title,
      command: ctx.nodePath,
      args: [path.join(ctx.serversDir, key, "bundle.mjs"), ...(launch.args ?? [])],
      env: launch.env ?? {},
    };
  }
  const github = GITHUB_KEY.exec(key);
  if (github) {
    const [, owner, repo] = github as unknown as [string, string, string];
    const cmd = checkCommand(key, value, COMMAND_FIELDS, problems);
    if (!cmd) return undefined;
    const dir = path.join(ctx.dataDir, "github", owner, repo);
    return {
      key,
      label: toLabel(repo.replace(/\.git$/, "")),
      title: `${owner}/${repo} (GitHub)`,
      command: "/bin/bash",
      args: [...BASH, cmd.runCmd],
      env: cmd.envs,
      cwd: dir,
      prepare: { cloneUrl: `https://github.com/${owner}/${repo}.git`, dir, installCmd: cmd.installCmd },
    };
  }
  const custom = CUSTOM_KEY.exec(key);
  if (custom) {
    const name = custom[1]!;
    if (!isLabel(name)) {
      problems.push(
        `'${key}': a custom server's name is letters, digits and dashes, starting with a letter (it prefixes its tools)`,
      );
      return undefined;
    }
    const cmd = checkCommand(key, value, [...COMMAND_FIELDS, "cwd"], problems);
    if (!cmd) return undefined;
    const cwd =
      typeof (value as Record<string, unknown>).cwd === "string"
        ? String((value as Record<string, unknown>).cwd)
        : "/";
    if (!path.isAbsolute(cwd)) {
      problems.push(`'${key}': cwd must be an absolute path, not '${cwd}'`);
      return undefined;
    }
    return {
      key,
      label: name,
      title: `${name} (custom)`,
      command: "/bin/bash",
      args: [...BASH, cmd.runCmd],
      env: cmd.envs,
      cwd,
      ...(cmd.installCmd ? { prepare: { dir: cwd, installCmd: cmd.installCmd } } : {}),
    };
  }
  if (key.startsWith("github/")) {
    problems.push(`'${key}': a GitHub server is named 'github/<owner>/<repo>'`);
    return undefined;
  }
  problems.push(
    `'${key}' is not an MCP server this gateway has (it has: ${Object.keys(CATALOG).join(", ")}); ` +
      'a server of your own runs as \'custom/<name>\': {"runCmd": "<command of a stdio MCP server>"}',
  );
  return undefined;
}

function checkOptions(
  key: string,
  value: unknown,
  allowed: Record<string, "string" | "string[]">,
  required: string[],
  problems: string[],
): ServerOptions | undefined {
  if (value === null || value === undefined) value = {};
  if (!isObject(value)) {
    problems.push(`'${key}': its options must be an object`);
    return undefined;
  }
  const before = problems.length;
  const names = Object.keys(allowed);
  for (const [option, v] of Object.entries(value)) {
    const type = Object.hasOwn(allowed, option) ? allowed[option] : undefined;
    if (!type) {
      problems.push(
        `'${key}' has no option '${option}' (${names.length ? `its options: ${names.join(", ")}` : "it takes none"})`,
      );
    } else if (type === "string" && typeof v !== "string") {
      problems.push(`'${key}': ${option} must be a string`);
    } else if (type === "string[]" && !(Array.isArray(v) && v.every((s) => typeof s === "string"))) {
      problems.push(`'${key}': ${option} must be a list of strings`);
    }
  }
  for (const option of required) {
    if (!Object.hasOwn(value, option)) problems.push(`'${key}' needs the option '${option}'`);
  }
  return problems.length === before ? (value as ServerOptions) : undefined;
}

function checkCommand(
  key: string,
  value: unknown,
  fields: string[],
  problems: string[],
): { runCmd: string; installCmd?: string; envs: Record<string, string> } | undefined {
  if (!isObject(value)) {
    problems.push(`'${key}' needs {"runCmd": "<command of a stdio MCP server>"}`);
    return undefined;
  }
  const before = problems.length;
  for (const field of Object.keys(value)) {
    if (!fields.includes(field))
      problems.push(`'${key}' has no field '${field}' (its fields: ${fields.join(", ")})`);
  }
  const { runCmd, installCmd, envs } = value;
  if (typeof runCmd !== "string" || runCmd.trim() === "") problems.push(`'${key}': runCmd must be a command`);
  if (installCmd !== undefined && typeof installCmd !== "string")
    problems.push(`'${key}': installCmd must be a string`);
  if (envs !== undefined && !(isObject(envs) && Object.values(envs).every((v) => typeof v === "string"))) {
    problems.push(`'${key}': envs must be an object of strings`);
  }
  if (problems.length > before) return undefined;
  return {
    runCmd: runCmd as string,
    ...(typeof installCmd === "string" && installCmd !== "" ? { installCmd } : {}),
    envs: (envs as Record<string, string> | undefined) ?? {},
  };
}
