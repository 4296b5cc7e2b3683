import { InvalidArgumentError } from "./errors.js";

/** A Dockerfile instruction that maps to a template step or the start command. */
export type DockerfileStep =
  | { kind: "RUN"; cmd: string }
  | { kind: "COPY"; srcs: string[]; dest: string; user?: string }
  | { kind: "ENV"; envs: Record<string, string> }
  | { kind: "WORKDIR"; dir: string }
  | { kind: "USER"; user: string }
  | { kind: "START"; cmd: string };

export interface ParsedDockerfile {
  from: string;
  steps: DockerfileStep[];
}

/** Instructions that mean nothing for a sandbox template and are skipped. */
const IGNORED = new Set(["EXPOSE", "VOLUME", "LABEL", "MAINTAINER", "STOPSIGNAL", "HEALTHCHECK", "SHELL"]);

/** Logical lines: comments dropped, `\` continuations joined. */
function logicalLines(text: string): { line: string; number: number }[] {
  const out: { line: string; number: number }[] = [];
  let current = "";
  let start = 0;
  text.split(/\r?\n/).forEach((raw, i) => {
    const trimmed = raw.trim();
    if (!current && (trimmed === "" || trimmed.startsWith("#"))) return;
    if (current && trimmed.startsWith("#")) return;
    if (!current) start = i + 1;
    if (trimmed.endsWith("\\")) {
      current += `${trimmed.slice(0, -1).trimEnd()} `;
      return;
    }
    current += trimmed;
    out.push({ line: current.trim(), number: start });
    current = "";
  });
  if (current.trim()) out.push({ line: current.trim(), number: start });
  return out;
}

/** Splits on whitespace, keeping double- or single-quoted parts together (quotes removed). */
function words(text: string): string[] {
  const out: string[] = [];
  const re = /"((?:[^"\\]|\\.)*)"|'([^']*)'|([^\s"']+)/g;
  let current = "";
  let last = -1;
  for (let m = re.exec(text); m; m = re.exec(text)) {
    const piece = m[1] !== undefined ? m[1].replace(/\\(.)/g, "$1") : (m[2] ?? m[3] ?? "");
    if (last === m.index) current += piece;
    else {
      if (last !== -1) out.push(current);
      current = piece;
    }
    last = re.lastIndex;
  }
  if (last !== -1) out.push(current);
  return out;
}

/** `["a", "b"]` (exec form) as an array, or undefined for shell form. */
function execForm(text: string): string[] | undefined {
  if (!text.startsWith("[")) return undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (Array.isArray(parsed) && parsed.every((p) => typeof p === "string")) return parsed;
  } catch {}
  return undefined;
}

function shellQuote(arg: string): string {
  return /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replace(/'/g, `'\\''`)}'`;
}

function envPairs(args: string, keyword: string, where: string): Record<string, string> {
  const parts = words(args);
  const envs: Record<string, string> = {};
  if (parts.length >= 2 && !parts[0]!.includes("=") && keyword === "ENV") {
    // legacy form: ENV NAME value with spaces
    envs[parts[0]!] = args.slice(args.indexOf(parts[0]!) + parts[0]!.length).trim();
    return envs;
  }
  for (const part of parts) {
    const eq = part.indexOf("=");
    if (eq > 0) envs[part.slice(0, eq)] = part.slice(eq + 1);
    else if (keyword === "ARG") envs[part] = "";
    else throw new InvalidArgumentError(`${where}: '${part}' is not NAME=value`);
  }
  return envs;
}

/**
 * Reads a single-stage Dockerfile into a base image and steps. RUN, CMD and ENTRYPOINT take
 * shell or exec form; COPY and ADD take `--chown=user` (ADD is COPY: no URLs, no unpacking).
 */
export function parseDockerfile(text: string): ParsedDockerfile {
  let from: string | undefined;
  const steps: DockerfileStep[] = [];
  for (const { line, number } of logicalLines(text)) {
    const match = /^(\S+)\s*(.*)$/s.exec(line);
    if (!match) continue;
    const keyword = match[1]!.toUpperCase();
    const args = match[2]!.trim();
    const where = `Dockerfile line ${number} (${keyword})`;
    if (keyword === "FROM") {
      if (from !== undefined)
        throw new InvalidArgumentError(`${where}: multi-stage Dockerfiles are not supported`);
      const image = words(args).filter((w) => !w.startsWith("--"))[0];
      if (!image) throw new InvalidArgumentError(`${where}: FROM needs an image`);
      from = image;
      continue;
    }
    if (from === undefined && keyword !== "ARG")
      throw new InvalidArgumentError(`${where}: the Dockerfile must start with FROM`);
    if (IGNORED.has(keyword)) continue;
    if (!args) throw new InvalidArgumentError(`${where}: ${keyword} needs arguments`);
    switch (keyword) {
      case "RUN": {
        const exec = execForm(args);
        steps.push({ kind: "RUN", cmd: exec ? exec.map(shellQuote).join(" ") : args });
        break;
      }
      case "COPY":
      case "ADD": {
        const parts = execForm(args) ?? words(args);
        const flags = parts.filter((p) => p.startsWith("--"));
        const paths = parts.filter((p) => !p.startsWith("--"));
        if (paths.length < 2) throw new InvalidArgumentError(`${where}: needs a source and a destination`);
        const chown = flags.find((f) => f.startsWith("--chown="))?.slice("--chown=".length);
        steps.push({
          kind: "COPY",
          srcs: paths.slice(0, -1),
          dest: paths.at(-1)!,
          ...(chown ? { user: chown } : {}),
        });
        break;
      }
      case "ENV":
      case "ARG": {
        const envs = envPairs(args, keyword, where);
        if (from !== undefined && Object.keys(envs).length > 0) steps.push({ kind: "ENV", envs });
        break;
      }
      case "WORKDIR":
        steps.push({ kind: "WORKDIR", dir: args });
        break;
      case "USER":
        steps.push({ kind: "USER", user: args });
        break;
      case "CMD":
      case "ENTRYPOINT": {
        const exec = execForm(args);
        steps.push({ kind: "START", cmd: exec ? exec.map(shellQuote).join(" ") : args });
        break;
      }
      default:
        throw new InvalidArgumentError(`${where}: ${keyword} is not supported in a template`);
    }
  }
  if (from === undefined) throw new InvalidArgumentError("The Dockerfile has no FROM instruction");
  return { from, steps };
}
