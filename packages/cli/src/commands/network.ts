import type { Schemas } from "@x/platform-client";
import { CliError, CONNECTION_HELP, call, connect } from "../connection.js";
import type { Io } from "../output/io.js";
import { parse, required } from "./args.js";

const HELP = `x sandbox network ID: the sandbox's egress decisions (connections and DNS lookups, what
they were for, allowed or denied and by which rule), oldest first

  --follow, -f       keep printing new decisions until interrupted (or the sandbox is gone)

${CONNECTION_HELP}`;

const POLL_MS = 1000;

function line(d: Schemas["SandboxNetworkDecision"]): string {
  const where = d.destination ? `${d.destination}${d.port === undefined ? "" : `:${d.port}`}` : "";
  const what = [d.name, where].filter(Boolean).join(" ");
  return `${d.time} ${d.verdict.toUpperCase().padEnd(7)} ${d.protocol.padEnd(4)} ${what}  (${d.rule})\n`;
}

/** `x sandbox network ID [--follow]`: with --json, one JSON object a line. */
export async function network(argv: string[], io: Io): Promise<number> {
  const name = "x sandbox network";
  const { values, positionals } = parse(name, argv, {
    follow: { type: "boolean", short: "f", default: false },
  });
  if (values.help) {
    io.out(HELP);
    return 0;
  }
  const conn = connect(values);
  const id = required(name, positionals, 0, "the sandbox ID");
  let after = 0;
  for (let polls = 0; ; polls++) {
    const page = await call(
      conn,
      `reading the network decisions of sandbox ${id}`,
      conn.api.GET("/sandboxes/{sandboxID}/network/decisions", {
        params: { path: { sandboxID: id }, query: { after, limit: 1000 } },
      }),
    ).catch((err: unknown) => {
      // following a sandbox that is killed (or times out) ends there
      if (polls > 0 && err instanceof CliError && err.status === 404) return undefined;
      throw err;
    });
    if (!page) {
      io.err(`${name}: sandbox ${id} is gone\n`);
      return 0;
    }
    for (const d of page.data.decisions) io.out(values.json ? `${JSON.stringify(d)}\n` : line(d));
    after = page.data.next;
    // a full page means more is waiting
    if (page.data.decisions.length === 1000) continue;
    if (!values.follow) return 0;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
