import { readFile } from "node:fs/promises";
import type { Readable } from "node:stream";
import type { Schemas } from "@x/platform-client";
import { allPages, CliError, CONNECTION_HELP, call, connect } from "../connection.js";
import { type Io, print } from "../output/io.js";
import { table } from "../output/table.js";
import { pairs, parse, required } from "./args.js";

const HELP = `x secret: the team's secrets, put into sandboxes' outbound request headers by the egress proxy

  x secret create NAME [--value-file FILE] [--metadata K=V]…
                                     a new secret; its value is read from stdin or FILE
  x secret update SECRET [--value-file FILE] [--metadata K=V]…
                                     a new version of its value (stdin or FILE); metadata given
                                     replaces the secret's, left out keeps it
  x secret list                      the team's secrets (never their values)
  x secret rm SECRET                 delete a secret and every version of it

SECRET is a secret's name or ID (sec_…). A value is never an argument, so it never lands in
your shell's history: pipe it in (\`printf %s "$TOKEN" | x secret create gh-token\`) or name a
file. A trailing newline of what is read is dropped. Use one in a sandbox's header rules as
\${e2b.secrets.NAME}.

${CONNECTION_HELP}`;

async function readAll(stream: Readable): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk as Buffer));
  return Buffer.concat(chunks).toString("utf8");
}

/** The value from `--value-file` or stdin (never an argument), without a trailing newline. */
async function readValue(command: string, io: Io, file: string | undefined): Promise<string> {
  let text: string;
  if (file !== undefined) {
    try {
      text = await readFile(file, "utf8");
    } catch (err) {
      throw new CliError(`${command}: cannot read ${file}: ${(err as Error).message}`);
    }
  } else if (io.stdin) {
    text = await readAll(io.stdin);
  } else {
    throw new CliError(
      `${command}: give the value on stdin or with --value-file FILE; see '${command} --help'`,
      2,
    );
  }
  const value = text.replace(/\r?\n$/, "");
  if (value === "") throw new CliError(`${command}: the value is empty`, 2);
  return value;
}

function rows(secrets: Schemas["Secret"][]): string {
  return table([
    ["SECRET", "NAME", "VERSION", "UPDATED"],
    ...secrets.map((s) => [s.secretID, s.name, String(s.currentVersion), s.updatedAt]),
  ]);
}

/** `x secret create|update|list|rm`; returns the exit code. */
export async function secret(argv: string[], io: Io): Promise<number> {
  const [command, ...rest] = argv;
  if (!command || command === "--help" || command === "-h" || command === "help") {
    (command ? io.out : io.err)(HELP);
    return command ? 0 : 2;
  }
  if (!["create", "update", "list", "rm"].includes(command))
    throw new CliError(`x secret: unknown command '${command}'\n${HELP}`, 2);
  const name = `x secret ${command}`;
  const { values, positionals } = parse(name, rest, {
    "value-file": { type: "string" },
    metadata: { type: "string", multiple: true },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const json = Boolean(values.json);
  const conn = connect(values);
  const metadata = values.metadata ? pairs(name, "metadata", values.metadata as string[]) : undefined;
  switch (command) {
    case "create": {
      const secretName = required(name, positionals, 0, "the secret's name");
      const value = await readValue(name, io, values["value-file"] as string | undefined);
      const { data } = await call(
        conn,
        `creating secret ${secretName}`,
        conn.api.POST("/secrets", { body: { name: secretName, value, metadata } }),
      );
      print(io, json, data, `${data.secretID}\n`);
      return 0;
    }
    case "update": {
      const ref = required(name, positionals, 0, "the secret's name or ID");
      const value = await readValue(name, io, values["value-file"] as string | undefined);
      const { data } = await call(
        conn,
        `updating secret ${ref}`,
        conn.api.POST("/secrets/{secretID}", {
          params: { path: { secretID: ref } },
          body: { value, metadata },
        }),
      );
      print(io, json, data, `${data.secretID} version ${data.currentVersion}\n`);
      return 0;
    }
    case "list": {
      const all = await allPages(conn, "listing secrets", (nextToken) =>
        conn.api.GET("/secrets", { params: { query: { limit: 100, nextToken } } }),
      );
      print(io, json, all, () => (all.length === 0 ? "no secrets\n" : rows(all)));
      return 0;
    }
    default: {
      const ref = required(name, positionals, 0, "the secret's name or ID");
      await call(
        conn,
        `deleting secret ${ref}`,
        conn.api.DELETE("/secrets/{secretID}", { params: { path: { secretID: ref } } }),
      );
      print(io, json, { deleted: ref }, `deleted ${ref}\n`);
      return 0;
    }
  }
}
