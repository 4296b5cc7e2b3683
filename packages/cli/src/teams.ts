import { parseArgs } from "node:util";
import { openStore, presentKey, type Store, SYSTEM_NAMESPACE, type Team, type TeamLimits } from "@x/platform";
import { CliError } from "./connection.js";
import { type Io, processIo } from "./output/io.js";
import { fields, table } from "./output/table.js";
import { STORE_HELP, STORE_OPTIONS, storeLocation } from "./store-location.js";
import { parsing, USAGE_EXIT, usageError } from "./usage.js";

const HELP = `x team: the platform's teams, directly in its store (run on the platform's host)

  x team create NAME [--namespace NS]   a new team and its first API key (printed this once)
  x team list                           every team, its limits and live sandboxes
  x team limits TEAM                    the team's limits
  x team limits TEAM [--sandboxes N] [--cpu N] [--memory-mb N] [--disk-mb N] [--timeout SECONDS]
                [--volumes N] [--volume-size-mb N] [--templates N] [--snapshots N]
                [--fork-count N] [--uploads N] [--uploads-mb N]
                                        set them ('none': back to the platform's); a team's
                                        limit only lowers the platform's (x serve --max-…)
  x team rm TEAM                        remove a team that holds nothing any more

TEAM is a team's ID, namespace or name. A team sees only its own sandboxes, templates,
snapshots, volumes, keys and webhooks. 'x keys --team TEAM' manages its keys.

  --namespace NS      prefix of the team's template names (default: from NAME)
  --sandboxes N       sandboxes starting or running at once
  --cpu N             vCPUs of one sandbox
  --memory-mb N       memory of one sandbox, MiB
  --disk-mb N         disk of one sandbox, MiB
  --timeout SECONDS   the longest timeout a sandbox may be given
  --volumes N         volumes it holds at once
  --volume-size-mb N  capacity of one volume, MiB
  --templates N       templates it holds at once, those its snapshots made included
  --snapshots N       snapshots it holds at once (each fork takes one)
  --fork-count N      sandboxes one fork request may start
  --uploads N         template build archives kept for it (the least recently used go first)
  --uploads-mb N      MiB of template build archives kept for it
${STORE_HELP}  --json              machine-readable output
`;

const NAMESPACE = /^[a-z0-9_-]{1,63}$/;

const LIMIT_FLAGS = {
  sandboxes: "sandboxes",
  cpu: "cpuCount",
  "memory-mb": "memoryMB",
  "disk-mb": "diskSizeMB",
  timeout: "timeoutSeconds",
  volumes: "volumes",
  "volume-size-mb": "volumeSizeMB",
  templates: "templates",
  snapshots: "snapshots",
  "fork-count": "forkCount",
  uploads: "uploads",
  "uploads-mb": "uploadsMB",
} as const satisfies Record<string, keyof TeamLimits>;

/** A namespace from a team's name: lowercase, other characters as '-'. */
export function namespaceFrom(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9_-]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63);
}

/** A limit flag's value: a positive whole number, or 'none' (null: the platform's). */
export function parseLimit(flag: string, raw: string): number | null {
  if (raw === "none") return null;
  const n = Number(raw);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(n) || n < 1)
    throw new CliError(`x team limits: --${flag} takes a positive whole number or 'none', got '${raw}'`, 2);
  return n;
}

const shownLimit = (n: number | null) => (n === null ? "platform's" : String(n));

async function teamNamed(store: Store, ref: string, command: string): Promise<Team> {
  const team = await store.teams.findTeam(ref);
  if (!team || team.namespace === SYSTEM_NAMESPACE)
    throw new CliError(`${command}: no team '${ref}' ('x team list' shows them)`);
  return team;
}

/** What a team still holds: a team is removed only when this is empty, so nothing is lost by it. */
async function holdings(store: Store, team: Team): Promise<string[]> {
  const [sandboxStates, templates, volumes] = await Promise.all([
    store.sandboxes.countByState(team.id),
    store.templates.listTemplates(team.id, { limit: 1000 }),
    store.volumes.count(team.id),
  ]);
  const sandboxes = Object.values(sandboxStates).reduce((a, b) => a + (b ?? 0), 0);
  const held: Array<[number, string]> = [
    [sandboxes, "sandboxes"],
    [templates.length, "templates or snapshots"],
    [volumes, "volumes"],
  ];
  return held.filter(([n]) => n > 0).map(([n, what]) => `${n} ${what}`);
}

type TeamValues = Record<string, string | boolean | undefined>;

function parseTeamArgs(argv: string[]): { values: TeamValues; command?: string; args: string[] } {
  const { values, positionals } = parsing("x team", () =>
    parseArgs({
      args: argv,
      options: {
        ...STORE_OPTIONS,
        namespace: { type: "string" },
        ...Object.fromEntries(Object.keys(LIMIT_FLAGS).map((flag) => [flag, { type: "string" as const }])),
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
      allowPositionals: true,
      strict: true,
    }),
  );
  const [command, ...args] = positionals;
  return { values, ...(command !== undefined ? { command } : {}), args };
}

/** A usage mistake in the subcommand or its arguments, found before the store is opened. */
function checkUsage(command: string, args: string[], values: TeamValues): void {
  switch (command) {
    case "create": {
      const [name] = args;
      if (!name || name.length > 100)
        throw usageError("x team create", "give the team a NAME of 1 to 100 characters");
      const namespace = (values.namespace as string | undefined) ?? namespaceFrom(name);
      if (!NAMESPACE.test(namespace) || namespace === SYSTEM_NAMESPACE)
        throw usageError(
          "x team create",
          `namespace '${namespace}' must be 1 to 63 of a-z, 0-9, '_' and '-', and not '${SYSTEM_NAMESPACE}' (--namespace NS)`,
        );
      return;
    }
    case "list":
      return;
    case "limits":
    case "rm":
      if (!args[0])
        throw usageError(
          `x team ${command}`,
          "name a TEAM (its ID, namespace or name; 'x team list' shows them)",
        );
      if (command === "limits") {
        for (const flag of Object.keys(LIMIT_FLAGS)) {
          const raw = values[flag];
          if (typeof raw === "string") parseLimit(flag, raw);
        }
      }
      return;
    default:
      throw usageError("x team", `unknown command '${command}' (create, list, limits or rm)`);
  }
}

async function run(
  store: Store,
  { values, command, args }: { values: TeamValues; command: string; args: string[] },
  io: Pick<Io, "out" | "err">,
): Promise<number> {
  const print = (value: unknown, text: string) =>
    io.out(values.json ? `${JSON.stringify(value, null, 2)}\n` : text);
  switch (command) {
    case "create": {
      const name = args[0]!;
      const namespace = (values.namespace as string | undefined) ?? namespaceFrom(name);
      if (await store.teams.findTeam(namespace))
        throw new CliError(`x team create: a team with namespace '${namespace}' exists (--namespace NS)`);
      const team = await store.teams.createTeam(name, namespace);
      const { key, apiKey } = await store.teams.createKey(team.id, "first key");
      print(
        { team, apiKey: { ...presentKey(apiKey), key } },
        `created team '${name}' (${team.id}, namespace ${namespace}); its first API key is shown only now:\n${key}\n`,
      );
      return 0;
    }
    case "list": {
      const teams = await store.teams.userTeams();
      const live = await Promise.all(teams.map((t) => store.sandboxes.countLive(t.id)));
      const rows = teams.map((t, i) => [
        t.id,
        t.namespace,
        t.name,
        String(live[i]),
        shownLimit(t.limits.sandboxes),
        t.createdAt,
      ]);
      print(
        teams.map((t, i) => ({ ...t, liveSandboxes: live[i] })),
        table([["ID", "NAMESPACE", "NAME", "LIVE", "MAX SANDBOXES", "CREATED"], ...rows]),
      );
      return 0;
    }
    case "limits": {
      const team = await teamNamed(store, args[0]!, "x team limits");
      const changes: Partial<TeamLimits> = {};
      for (const [flag, limit] of Object.entries(LIMIT_FLAGS)) {
        const raw = values[flag];
        if (typeof raw === "string") changes[limit] = parseLimit(flag, raw);
      }
      const after = (await store.teams.setLimits(team.id, changes)) ?? team;
      const l = after.limits;
      print(
        after.limits,
        `limits of team ${after.namespace} (unset: the platform's):\n${fields(
          Object.entries(LIMIT_FLAGS).map(([flag, limit]) => [flag, shownLimit(l[limit])]),
        )}`,
      );
      return 0;
    }
    case "rm": {
      const team = await teamNamed(store, args[0]!, "x team rm");
      const held = await holdings(store, team);
      if (held.length > 0)
        throw new CliError(
          `x team rm: team ${team.namespace} still holds ${held.join(", ")}: kill, delete or move them first (with one of its keys)`,
        );
      await store.teams.deleteTeam(team.id);
      print({ teamID: team.id, removed: true }, `removed team ${team.namespace} (${team.id}) and its keys\n`);
      return 0;
    }
    default:
      throw new Error(`unknown team command '${command}'`);
  }
}

/** `x team create | list | limits | rm`; returns the exit code. */
export async function team(argv: string[], io: Pick<Io, "out" | "err"> = processIo): Promise<number> {
  if (argv.length === 0 || argv.includes("--help") || argv.includes("-h")) {
    (argv.length === 0 ? io.err : io.out)(HELP);
    return argv.length === 0 ? USAGE_EXIT : 0;
  }
  const { values, command, args } = parseTeamArgs(argv);
  if (command === undefined) {
    io.err(HELP);
    return USAGE_EXIT;
  }
  checkUsage(command, args, values);
  const store = await openStore(storeLocation(values as { "data-dir"?: string; "database-url"?: string }));
  try {
    return await run(store, { values, command, args }, io);
  } finally {
    await store.close();
  }
}
