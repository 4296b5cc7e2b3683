import { readFile } from "node:fs/promises";
import path from "node:path";
import type { Schemas } from "@x/platform-client";
import { InvalidArgumentError } from "@x/sdk";
import { allPages, CliError, CONNECTION_HELP, call, connect, explain } from "../connection.js";
import { type Io, print } from "../output/io.js";
import { createProgress } from "../output/progress.js";
import { fields, table } from "../output/table.js";
import { buildTemplate } from "../template/build.js";
import { integer, parse, required } from "./args.js";
import { templateInstall } from "./template-install.js";

const HELP = `x template: build and manage templates

  x template build --name NAME[:TAG] [--file x.Dockerfile] [--context DIR] [--cpu N] [--memory MB]
  x template list
  x template get NAME|ID
  x template tag NAME[:TAG] NEWTAG...        point tags at the build NAME[:TAG] points at
  x template tag NAME --remove TAG...        remove tags
  x template delete NAME|ID
  x template pool NAME|ID --min N --max N     sandboxes of it kept ready (a warm pool)
  x template install NAME... | --all         build the templates that ship with the platform

'x template COMMAND --help' for each.

${CONNECTION_HELP}`;

const SUBHELP: Record<string, string> = {
  build: `x template build --name NAME[:TAG]: build a template from a Dockerfile-like file

  --name NAME[:TAG]  template name (tagged 'default' unless given)
  --file PATH        the build file (default x.Dockerfile, else Dockerfile, in the context)
  --context DIR      directory COPY sources are relative to (default: the file's directory)
  --cpu N            CPUs of the template's sandboxes
  --memory MB        memory of the template's sandboxes, MiB
  --ready-cmd CMD    command that exits 0 once CMD's server is ready
  --no-cache         ignore cached layers

The file takes FROM (a template such as 'base', e2bdev/base, or 'oci:/path:tag' on the platform
host), RUN, COPY [--chown=U] SRC... DEST, ENV, ARG, WORKDIR, USER and CMD/ENTRYPOINT (started after
the build and snapshotted running). As with the e2b client, steps run as root in / until USER and
WORKDIR say otherwise, and sandboxes then run as 'user' in /home/user unless the file set its own.
Build logs are shown as they come; --json prints the result at the end.
`,
  list: "x template list: the team's templates\n",
  get: "x template get NAME|ID: a template with its builds and tags\n",
  tag: "x template tag NAME[:TAG] NEWTAG... | x template tag NAME --remove TAG...\n",
  delete: "x template delete NAME|ID: delete a template with all its builds (no sandbox may use it)\n",
  pool: `x template pool NAME|ID [--min N] [--max N]: how many sandboxes of the template are kept ready

The platform keeps ready sandboxes per template build so that creates need not boot; the pool
sizes itself to demand between --min and --max. Without them, the platform's own bounds
(x serve --pool-size / --pool-max) apply again.
`,
};

async function findBuildFile(context: string): Promise<string> {
  for (const name of ["x.Dockerfile", "Dockerfile"]) {
    const file = path.join(context, name);
    if (
      await readFile(file).then(
        () => true,
        () => false,
      )
    )
      return file;
  }
  throw new CliError(`x template build: no x.Dockerfile or Dockerfile in ${context}; pass --file PATH`, 2);
}

/** `x template …`; returns the exit code. */
export async function template(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    (command ? io.out : io.err)(HELP);
    return command ? 0 : 2;
  }
  if (command === "install") return templateInstall(rest, io);
  if (!(command in SUBHELP)) throw new CliError(`x template: unknown command '${command}'\n${HELP}`, 2);
  const name = `x template ${command}`;
  const { values, positionals } = parse(name, rest, {
    name: { type: "string" },
    file: { type: "string" },
    context: { type: "string" },
    cpu: { type: "string" },
    memory: { type: "string" },
    "ready-cmd": { type: "string" },
    "no-cache": { type: "boolean", default: false },
    remove: { type: "boolean", default: false },
    min: { type: "string" },
    max: { type: "string" },
  });
  if (values.help) {
    io.out(`${SUBHELP[command]}\n${CONNECTION_HELP}`);
    return 0;
  }
  const json = Boolean(values.json);
  const conn = connect(values);
  const ref = () => required(name, positionals, 0, "the template name or ID");
  const templatePath = () => ({ params: { path: { templateID: ref() } } });
  switch (command) {
    case "build": {
      const templateName = values.name as string | undefined;
      if (!templateName) throw new CliError(`${name}: --name NAME is required`, 2);
      const given = values.file as string | undefined;
      const context = path.resolve(
        (values.context as string | undefined) ?? (given ? path.dirname(given) : "."),
      );
      const file = given ? path.resolve(given) : await findBuildFile(context);
      const text = await readFile(file, "utf8").catch(() => {
        throw new CliError(`${name}: cannot read ${file}`, 2);
      });
      const progress = createProgress(io);
      let result: Awaited<ReturnType<typeof buildTemplate>>;
      try {
        result = await buildTemplate(
          conn,
          {
            name: templateName,
            dockerfile: text,
            context,
            cpuCount: integer(name, "cpu", values.cpu as string | undefined),
            memoryMB: integer(name, "memory", values.memory as string | undefined),
            readyCmd: values["ready-cmd"] as string | undefined,
            skipCache: Boolean(values["no-cache"]),
          },
          progress,
        );
      } catch (err) {
        progress.stop();
        if (err instanceof CliError) throw err;
        // a file that cannot be built is a usage mistake; a failed build is not
        const usage = err instanceof InvalidArgumentError;
        throw new CliError(`${name}: ${usage ? `${file}: ` : ""}${explain(err, conn)}`, usage ? 2 : 1);
      }
      progress.stop();
      print(
        io,
        json,
        result,
        `built ${result.name} (template ${result.templateID}, build ${result.buildID})\n`,
      );
      return 0;
    }
    case "list": {
      const templates = await allPages(conn, "listing templates", (nextToken) =>
        conn.api.GET("/v2/templates", { params: { query: nextToken ? { nextToken } : {} } }),
      );
      print(io, json, templates, () =>
        templates.length === 0
          ? "no templates of this team yet ('x template build' makes one)\n"
          : table([
              ["ID", "NAMES", "STATUS", "BUILDS", "CPUS", "MEMORY MB", "PUBLIC", "UPDATED"],
              ...templates.map((t: Schemas["Template"]) => [
                t.templateID,
                t.names.join(","),
                t.buildStatus,
                String(t.buildCount),
                String(t.cpuCount),
                String(t.memoryMB),
                t.public ? "yes" : "no",
                t.updatedAt,
              ]),
            ]),
      );
      return 0;
    }
    case "get": {
      const { data } = await call(
        conn,
        `getting template ${ref()}`,
        conn.api.GET("/templates/{templateID}", templatePath()),
      );
      const { data: tags } = await call(
        conn,
        `listing tags of template ${ref()}`,
        conn.api.GET("/templates/{templateID}/tags", templatePath()),
      );
      print(io, json, { ...data, tags }, () => {
        const tagsOf = (buildID: string) =>
          tags
            .filter((t) => t.buildID === buildID)
            .map((t) => t.tag)
            .join(",");
        return `${fields([
          ["ID", data.templateID],
          ["Names", data.names.join(", ")],
          ["Public", data.public ? "yes" : "no"],
          ["Created", data.createdAt],
          [
            "Warm pool",
            data.warmPool
              ? `min ${data.warmPool.min ?? "default"}, max ${data.warmPool.max ?? "default"}`
              : "the platform's defaults",
          ],
          [
            "Sandboxes",
            `${data.spawnCount} started${data.lastSpawnedAt ? `, last ${data.lastSpawnedAt}` : ""}`,
          ],
        ])}\n${table([
          ["BUILD", "STATUS", "TAGS", "CPUS", "MEMORY MB", "CREATED"],
          ...data.builds.map((b) => [
            b.buildID,
            b.status,
            tagsOf(b.buildID),
            String(b.cpuCount),
            String(b.memoryMB),
            b.createdAt,
          ]),
        ])}`;
      });
      return 0;
    }
    case "tag": {
      const target = ref();
      const tags = positionals.slice(1);
      if (tags.length === 0) throw new CliError(`${name}: give at least one tag after ${target}`, 2);
      if (values.remove) {
        await call(
          conn,
          `removing tags from ${target}`,
          conn.api.DELETE("/templates/tags", { body: { name: target, tags } }),
        );
        print(io, json, { name: target, removed: tags }, `removed ${tags.join(", ")} from ${target}\n`);
        return 0;
      }
      const { data } = await call(
        conn,
        `tagging ${target}`,
        conn.api.POST("/templates/tags", { body: { target, tags } }),
      );
      print(io, json, data, `tagged build ${data.buildID} as ${data.tags.join(", ")}\n`);
      return 0;
    }
    case "pool": {
      const min = integer(name, "min", values.min as string | undefined);
      const max = integer(name, "max", values.max as string | undefined);
      await call(
        conn,
        `setting the warm pool of template ${ref()}`,
        conn.api.PATCH("/v2/templates/{templateID}", {
          ...templatePath(),
          body: {
            warmPool: { ...(min !== undefined ? { min } : {}), ...(max !== undefined ? { max } : {}) },
          },
        }),
      );
      const bounds =
        min === undefined && max === undefined
          ? "the platform's defaults"
          : `min ${min ?? "default"}, max ${max ?? "default"}`;
      print(io, json, { templateID: ref(), warmPool: { min, max } }, `warm pool of ${ref()}: ${bounds}\n`);
      return 0;
    }
    case "delete": {
      await call(
        conn,
        `deleting template ${ref()}`,
        conn.api.DELETE("/templates/{templateID}", templatePath()),
      );
      print(io, json, { templateID: ref(), deleted: true }, `deleted ${ref()}\n`);
      return 0;
    }
  }
  return 2;
}
