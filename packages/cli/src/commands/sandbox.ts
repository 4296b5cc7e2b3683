import type { Schemas } from "@x/platform-client";
import { allPages, CliError, CONNECTION_HELP, call, connect } from "../connection.js";
import { type Io, print } from "../output/io.js";
import { fields, formatBytes, formatMetadata, table } from "../output/table.js";
import { shell } from "../terminal/shell.js";
import { integer, pairs, parse, required } from "./args.js";
import { exec } from "./exec.js";
import { logs } from "./logs.js";
import { network } from "./network.js";

const HELP = `x sandbox: create, inspect and drive sandboxes

  x sandbox create [--template T] [--timeout S] [--metadata k=v]... [--env K=V]... [--runtime runsc|runc]
                   [--volume NAME:/PATH]...
  x sandbox list [--state running,paused] [--metadata k=v]...
  x sandbox info ID
  x sandbox kill ID
  x sandbox pause ID
  x sandbox resume ID [--timeout S]
  x sandbox logs ID [--follow] [--level debug|info|warn|error]
  x sandbox metrics ID
  x sandbox network ID [--follow]
  x sandbox exec ID [--cwd DIR] [--env K=V]... -- CMD [ARGS...]
  x sandbox shell ID

'x sandbox COMMAND --help' for each.

${CONNECTION_HELP}`;

const SUBHELP: Record<string, string> = {
  create: `x sandbox create: start a sandbox and print its ID

  --template T       template ID, name or name:tag (default base)
  --timeout S        seconds to live (default 300)
  --metadata k=v     metadata, repeatable
  --env K=V          environment of every command, repeatable
  --runtime NAME     runsc (gVisor) or runc; the platform's default otherwise
  --volume NAME:/PATH
                     mount the team's volume NAME read-write at /PATH, repeatable
`,
  list: `x sandbox list: the team's sandboxes, newest first

  --state LIST       only these states: running,paused
  --metadata k=v     only sandboxes with this metadata, repeatable
`,
  info: "x sandbox info ID: state, resources, metadata and end time of a sandbox\n",
  kill: "x sandbox kill ID: kill a sandbox (running or paused)\n",
  pause: "x sandbox pause ID: pause a running sandbox, keeping its memory\n",
  resume: "x sandbox resume ID [--timeout S]: resume a paused sandbox\n",
  metrics: "x sandbox metrics ID: CPU, memory and disk samples of a sandbox, oldest first\n",
};

const STATES = ["running", "paused"] as const;

function sandboxRow(s: Schemas["ListedSandbox"]): string[] {
  return [
    s.sandboxID,
    s.alias ?? s.templateID,
    s.state,
    String(s.cpuCount),
    String(s.memoryMB),
    s.startedAt,
    s.endAt,
    formatMetadata(s.metadata),
  ];
}

function detailText(s: Schemas["SandboxDetail"]): string {
  return fields([
    ["ID", s.sandboxID],
    ["Template", s.alias ? `${s.alias} (${s.templateID})` : s.templateID],
    ["State", s.pauseKind ? `${s.state} (${s.pauseKind})` : s.state],
    ["CPUs", s.cpuCount],
    ["Memory", `${s.memoryMB} MiB`],
    ["Disk", `${s.diskSizeMB} MiB`],
    ["Started", s.startedAt],
    ["Ends", s.endAt],
    ["envd", s.envdVersion],
    ["Metadata", formatMetadata(s.metadata) || undefined],
  ]);
}

/** `x sandbox …`; returns the exit code. */
export async function sandbox(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  const name = `x sandbox ${command}`;
  if (command === "exec") return exec(rest, io);
  if (command === "shell") return shell(rest, io);
  if (command === "logs") return logs(rest, io);
  if (command === "network") return network(rest, io);
  if (!command || command === "--help" || command === "-h" || command === "help") {
    (command ? io.out : io.err)(HELP);
    return command ? 0 : 2;
  }
  if (!(command in SUBHELP)) throw new CliError(`x sandbox: unknown command '${command}'\n${HELP}`, 2);
  const { values, positionals } = parse(name, rest, {
    template: { type: "string" },
    timeout: { type: "string" },
    metadata: { type: "string", multiple: true },
    env: { type: "string", multiple: true },
    runtime: { type: "string" },
    volume: { type: "string", multiple: true },
    state: { type: "string" },
  });
  if (values.help) {
    io.out(`${SUBHELP[command]}\n${CONNECTION_HELP}`);
    return 0;
  }
  const json = Boolean(values.json);
  const conn = connect(values);
  const id = () => required(name, positionals, 0, "the sandbox ID ('x sandbox list' shows them)");
  const path = () => ({ params: { path: { sandboxID: id() } } });
  switch (command) {
    case "create": {
      const runtime = values.runtime as string | undefined;
      if (runtime && runtime !== "runsc" && runtime !== "runc")
        throw new CliError(`${name}: --runtime must be runsc or runc, got '${runtime}'`, 2);
      const { data } = await call(
        conn,
        "creating a sandbox",
        conn.api.POST("/v2/sandboxes", {
          body: {
            templateID: (values.template as string | undefined) ?? "base",
            timeout: integer(name, "timeout", values.timeout as string | undefined) ?? 300,
            metadata: pairs(name, "metadata", values.metadata as string[] | undefined),
            envVars: pairs(name, "env", values.env as string[] | undefined),
            ...(runtime ? { runtime: runtime as Schemas["SandboxRuntime"] } : {}),
            ...(values.volume ? { volumeMounts: volumeMounts(name, values.volume as string[]) } : {}),
          },
        }),
      );
      const { envdAccessToken: _token, trafficAccessToken: _traffic, ...shown } = data;
      print(io, json, shown, `${data.sandboxID}\n`);
      return 0;
    }
    case "list": {
      const state = (values.state as string | undefined)?.split(",").filter(Boolean);
      for (const s of state ?? [])
        if (!(STATES as readonly string[]).includes(s))
          throw new CliError(`${name}: --state takes running and/or paused, got '${s}'`, 2);
      const metadata = pairs(name, "metadata", values.metadata as string[] | undefined);
      const query = Object.entries(metadata)
        .map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`)
        .join("&");
      const sandboxes = await allPages(conn, "listing sandboxes", (nextToken) =>
        conn.api.GET("/v2/sandboxes", {
          params: {
            query: {
              ...(query ? { metadata: query } : {}),
              ...(state?.length ? { state: state as Schemas["SandboxState"][] } : {}),
              ...(nextToken ? { nextToken } : {}),
            },
          },
        }),
      );
      print(io, json, sandboxes, () =>
        sandboxes.length === 0
          ? "no sandboxes\n"
          : table([
              ["ID", "TEMPLATE", "STATE", "CPUS", "MEMORY MB", "STARTED", "ENDS", "METADATA"],
              ...sandboxes.map(sandboxRow),
            ]),
      );
      return 0;
    }
    case "info": {
      const { data } = await call(
        conn,
        `getting sandbox ${id()}`,
        conn.api.GET("/sandboxes/{sandboxID}", path()),
      );
      const { envdAccessToken: _token, ...shown } = data;
      print(io, json, shown, () => detailText(data));
      return 0;
    }
    case "kill": {
      await call(conn, `killing sandbox ${id()}`, conn.api.DELETE("/sandboxes/{sandboxID}", path()));
      print(io, json, { sandboxID: id(), killed: true }, `killed ${id()}\n`);
      return 0;
    }
    case "pause": {
      await call(
        conn,
        `pausing sandbox ${id()}`,
        conn.api.POST("/sandboxes/{sandboxID}/pause", { ...path(), body: {} }),
      );
      print(io, json, { sandboxID: id(), state: "paused" }, `paused ${id()}\n`);
      return 0;
    }
    case "resume": {
      const timeout = integer(name, "timeout", values.timeout as string | undefined);
      await call(
        conn,
        `resuming sandbox ${id()}`,
        conn.api.POST("/v2/sandboxes/{sandboxID}/connect", {
          ...path(),
          body: timeout === undefined ? {} : { timeout },
        }),
      );
      print(io, json, { sandboxID: id(), state: "running" }, `resumed ${id()}\n`);
      return 0;
    }
    case "metrics": {
      const { data } = await call(
        conn,
        `getting metrics of sandbox ${id()}`,
        conn.api.GET("/sandboxes/{sandboxID}/metrics", path()),
      );
      print(io, json, data, () =>
        data.length === 0
          ? "no samples yet\n"
          : table([
              ["TIME", "CPUS", "CPU %", "MEMORY", "DISK"],
              ...data.map((m) => [
                new Date(m.timestampUnix * 1000).toISOString(),
                String(m.cpuCount),
                m.cpuUsedPct.toFixed(1),
                `${formatBytes(m.memUsed)} / ${formatBytes(m.memTotal)}`,
                `${formatBytes(m.diskUsed)} / ${formatBytes(m.diskTotal)}`,
              ]),
            ]),
      );
      return 0;
    }
  }
  return 2;
}

/** `--volume NAME:/PATH` flags as the create's mounts (the platform checks names and paths). */
function volumeMounts(command: string, flags: string[]): Schemas["SandboxVolumeMount"][] {
  return flags.map((flag) => {
    const i = flag.indexOf(":");
    if (i <= 0) throw new CliError(`${command}: --volume takes NAME:/PATH, got '${flag}'`, 2);
    return { name: flag.slice(0, i), path: flag.slice(i + 1) };
  });
}
