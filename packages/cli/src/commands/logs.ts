import type { Schemas } from "@x/platform-client";
import { CONNECTION_HELP, call, connect } from "../connection.js";
import type { Io } from "../output/io.js";
import { parse, required } from "./args.js";
import { readPages } from "./follow.js";

const HELP = `x sandbox logs ID: the sandbox's logs (its agent and lifecycle events), oldest first

  --follow, -f       keep printing new entries until interrupted (or the sandbox is gone)
  --level LEVEL      only debug, info, warn or error and above

${CONNECTION_HELP}`;

const LEVELS = ["debug", "info", "warn", "error"];

function line(e: Schemas["SandboxLogEntry"]): string {
  const extra = Object.entries(e.fields ?? {})
    .map(([k, v]) => `${k}=${v}`)
    .join(" ");
  return `${e.timestamp} ${e.level.toUpperCase().padEnd(5)} ${e.message}${extra ? ` ${extra}` : ""}\n`;
}

/** `x sandbox logs ID [--follow]`: with --json, one JSON object a line. */
export async function logs(argv: string[], io: Io): Promise<number> {
  const name = "x sandbox logs";
  const { values, positionals } = parse(name, argv, {
    follow: { type: "boolean", short: "f", default: false },
    level: { type: "string" },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const level = values.level as string | undefined;
  if (level && !LEVELS.includes(level)) {
    io.err(`${name}: --level takes ${LEVELS.join(", ")}, got '${level}'\n`);
    return 2;
  }
  const conn = connect(values);
  const id = required(name, positionals, 0, "the sandbox ID");
  let cursor: number | undefined;
  const seen = new Set<string>();
  return readPages({ name, id, follow: Boolean(values.follow), io }, async () => {
    const page = await call(
      conn,
      `reading logs of sandbox ${id}`,
      conn.api.GET("/v2/sandboxes/{sandboxID}/logs", {
        params: {
          path: { sandboxID: id },
          query: {
            direction: "forward",
            limit: 1000,
            ...(cursor === undefined ? {} : { cursor }),
            ...(level ? { level: level as Schemas["LogLevel"] } : {}),
          },
        },
      }),
    );
    for (const entry of page.data.logs) {
      // the cursor is inclusive: entries at the last timestamp come again
      const at = new Date(entry.timestamp).getTime();
      const key = JSON.stringify(entry);
      if (seen.has(key)) continue;
      if (cursor === undefined || at > cursor) seen.clear();
      seen.add(key);
      io.out(values.json ? `${JSON.stringify(entry)}\n` : line(entry));
      cursor = at;
    }
    return { more: false };
  });
}
