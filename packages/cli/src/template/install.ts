import { existsSync } from "node:fs";
import { cp, mkdtemp, readFile, rm, stat } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { isShippedTemplate, SHIPPED_TEMPLATES } from "@x/platform";
import { parse as parseYaml } from "yaml";
import { CliError, type Connection, call } from "../connection.js";
import type { Progress } from "../output/progress.js";
import { type BuildResult, buildTemplate } from "./build.js";

/**
 * Templates that ship with the platform: a folder per template under the repository's
 * templates/, with the Dockerfile users read and copy, and template.yaml saying how it is built
 * (ready command, resources, and the folders its COPY steps take from the repository).
 */
export interface ShippedTemplate {
  name: string;
  dir: string;
  dockerfile: string;
  readyCmd?: string;
  cpuCount?: number;
  memoryMB?: number;
  /** COPY sources: name in the build context → directory, relative to `dir`. */
  context: Record<string, string>;
}

/** The repository's templates/ folder, found above this module (source or build output). */
export function shippedTemplatesDir(): string {
  if (process.env.X_TEMPLATES_DIR) return process.env.X_TEMPLATES_DIR;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const candidate = path.join(dir, "templates");
    if (existsSync(path.join(candidate, SHIPPED_TEMPLATES[0], "template.yaml"))) return candidate;
    const up = path.dirname(dir);
    if (up === dir)
      throw new CliError("the platform's templates/ folder was not found (set X_TEMPLATES_DIR)");
    dir = up;
  }
}

export async function loadShippedTemplate(name: string): Promise<ShippedTemplate> {
  if (!isShippedTemplate(name)) {
    throw new CliError(
      `'${name}' is not a template that ships with the platform (those are: ${SHIPPED_TEMPLATES.join(", ")})`,
      2,
    );
  }
  const dir = path.join(shippedTemplatesDir(), name);
  const manifest = parseYaml(await readFile(path.join(dir, "template.yaml"), "utf8")) as Record<
    string,
    unknown
  >;
  if (manifest.name !== name || typeof manifest.dockerfile !== "string")
    throw new CliError(`${dir}/template.yaml must name the template '${name}' and its dockerfile`);
  const num = (key: string) => (typeof manifest[key] === "number" ? (manifest[key] as number) : undefined);
  return {
    name,
    dir,
    dockerfile: manifest.dockerfile,
    readyCmd: typeof manifest.readyCmd === "string" ? manifest.readyCmd : undefined,
    cpuCount: num("cpuCount"),
    memoryMB: num("memoryMB"),
    context: (manifest.context as Record<string, string> | undefined) ?? {},
  };
}

/**
 * Builds a shipped template through the platform's own build API with `conn` (a key of the
 * system team, so every team finds it by its bare name), then makes it public. Its COPY sources
 * are gathered into a build context first; a missing one (the interpreter not built) is named.
 */
export async function installShippedTemplate(
  conn: Connection,
  t: ShippedTemplate,
  progress: Progress,
  opts: { skipCache?: boolean } = {},
): Promise<BuildResult> {
  const context = await mkdtemp(path.join(tmpdir(), `x-template-${t.name}-`));
  try {
    for (const [name, relative] of Object.entries(t.context)) {
      const source = path.resolve(t.dir, relative);
      if (!(await stat(source).catch(() => undefined))?.isDirectory()) {
        throw new CliError(`${t.name}: ${source} is missing: run 'pnpm build' in the repository first`);
      }
      await cp(source, path.join(context, name), { recursive: true });
    }
    const result = await buildTemplate(
      conn,
      {
        name: t.name,
        dockerfile: await readFile(path.join(t.dir, t.dockerfile), "utf8"),
        context,
        cpuCount: t.cpuCount,
        memoryMB: t.memoryMB,
        readyCmd: t.readyCmd,
        skipCache: opts.skipCache,
      },
      progress,
    );
    await call(
      conn,
      `making ${t.name} public`,
      conn.api.PATCH("/v2/templates/{templateID}", {
        params: { path: { templateID: result.templateID } },
        body: { public: true },
      }),
    );
    return result;
  } finally {
    await rm(context, { recursive: true, force: true });
  }
}
