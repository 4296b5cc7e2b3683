import { allPages, CliError, CONNECTION_HELP, call, connect } from "../connection.js";
import { type Io, print } from "../output/io.js";
import { table } from "../output/table.js";
import { parse, required } from "./args.js";

const HELP = `x snapshot: save sandboxes as templates to start new sandboxes from

  x snapshot create ID [--name NAME]   snapshot a sandbox (it keeps running); prints the snapshot ID
  x snapshot list [--sandbox ID]       the team's snapshots

Start a sandbox from one with 'x sandbox create --template SNAPSHOT_ID'; delete one with
'x template delete SNAPSHOT_ID'.

${CONNECTION_HELP}`;

/** `x snapshot create|list`; returns the exit code. */
export async function snapshot(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    (command ? io.out : io.err)(HELP);
    return command ? 0 : 2;
  }
  if (command !== "create" && command !== "list")
    throw new CliError(`x snapshot: unknown command '${command}'\n${HELP}`, 2);
  const name = `x snapshot ${command}`;
  const { values, positionals } = parse(name, rest, {
    name: { type: "string" },
    sandbox: { type: "string" },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const json = Boolean(values.json);
  const conn = connect(values);
  if (command === "create") {
    const id = required(name, positionals, 0, "the sandbox ID");
    const snapshotName = values.name as string | undefined;
    const { data } = await call(
      conn,
      `snapshotting sandbox ${id}`,
      conn.api.POST("/sandboxes/{sandboxID}/snapshots", {
        params: { path: { sandboxID: id } },
        body: snapshotName ? { name: snapshotName } : {},
      }),
    );
    print(io, json, data, `${data.snapshotID}\n`);
    return 0;
  }
  const sandboxID = values.sandbox as string | undefined;
  const snapshots = await allPages(conn, "listing snapshots", (nextToken) =>
    conn.api.GET("/snapshots", {
      params: { query: { ...(sandboxID ? { sandboxID } : {}), ...(nextToken ? { nextToken } : {}) } },
    }),
  );
  print(io, json, snapshots, () =>
    snapshots.length === 0
      ? "no snapshots\n"
      : table([["SNAPSHOT", "NAMES"], ...snapshots.map((s) => [s.snapshotID, s.names.join(",")])]),
  );
  return 0;
}
