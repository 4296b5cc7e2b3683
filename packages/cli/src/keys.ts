import { parseArgs } from "node:util";
import { openStore, presentKey, type Store, SYSTEM_NAMESPACE } from "@x/platform";
import { type Io, processIo } from "./output/io.js";
import { table } from "./output/table.js";
import { STORE_HELP, STORE_OPTIONS, storeLocation } from "./store-location.js";
import { parsing, USAGE_EXIT, usageError } from "./usage.js";

const HELP = `x keys: manage a team's API keys, directly in the platform's store

  x keys create NAME   make a key; it is printed this once and never again
  x keys list          the team's keys (masked)
  x keys revoke ID     revoke a key at once (ID as 'list' shows it)

  --team TEAM         the team (ID, namespace or name; default: the first team)
${STORE_HELP}  --json              machine-readable output
`;

export type KeysIo = Pick<Io, "out" | "err">;

async function run(
  store: Store,
  command: string,
  args: string[],
  json: boolean,
  io: KeysIo,
  teamRef: string | undefined,
): Promise<number> {
  const found = teamRef === undefined ? await store.teams.defaultTeam() : await store.teams.findTeam(teamRef);
  if (!found || found.namespace === SYSTEM_NAMESPACE) {
    io.err(`x keys: no team '${teamRef}' ('x team list' shows them)\n`);
    return 1;
  }
  const team = found;
  const print = (value: unknown, text: string) => io.out(json ? `${JSON.stringify(value, null, 2)}\n` : text);
  switch (command) {
    case "create": {
      const name = args[0]!;
      const { key, apiKey: row } = await store.teams.createKey(team.id, name);
      print(
        { ...presentKey(row), key },
        `created key '${name}' (${row.id}) for team ${team.namespace}; it is shown only now:\n${key}\n`,
      );
      return 0;
    }
    case "list": {
      const rows = await store.teams.listKeys(team.id);
      const header = ["ID", "NAME", "KEY", "CREATED", "LAST USED"];
      print(
        rows.map(presentKey),
        table([header, ...rows.map((r) => [r.id, r.name, r.keyMask, r.createdAt, r.lastUsedAt ?? "never"])]),
      );
      return 0;
    }
    case "revoke": {
      const id = args[0]!;
      if (!(await store.teams.revokeKey(team.id, id))) {
        io.err(`x keys revoke: team ${team.namespace} has no key ${id}\n`);
        return 1;
      }
      print({ apiKeyID: id, revoked: true }, `revoked key ${id}\n`);
      return 0;
    }
    default:
      throw new Error(`unknown keys command '${command}'`);
  }
}

/** A usage mistake in the subcommand or its arguments, found before the store is opened. */
function checkUsage(command: string, args: string[]): void {
  switch (command) {
    case "create": {
      const [name] = args;
      if (!name || name.length > 100)
        throw usageError("x keys create", "give the key a NAME of 1 to 100 characters");
      return;
    }
    case "list":
      return;
    case "revoke":
      if (!args[0])
        throw usageError("x keys revoke", "give the ID of the key to revoke ('x keys list' shows them)");
      return;
    default:
      throw usageError("x keys", `unknown command '${command}' (create, list or revoke)`);
  }
}

/** `x keys create NAME | list | revoke ID`; returns the exit code. */
export async function keys(argv: string[], io: KeysIo = processIo): Promise<number> {
  const { values, positionals } = parsing("x keys", () =>
    parseArgs({
      args: argv,
      options: {
        ...STORE_OPTIONS,
        team: { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
      allowPositionals: true,
      strict: true,
    }),
  );
  const [command, ...args] = positionals;
  if (values.help || !command) {
    (values.help ? io.out : io.err)(HELP);
    return values.help ? 0 : USAGE_EXIT;
  }
  checkUsage(command, args);
  const store = await openStore(storeLocation(values));
  try {
    return await run(store, command, args, values.json ?? false, io, values.team);
  } finally {
    await store.close();
  }
}
