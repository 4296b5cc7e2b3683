import type { Schemas } from "@x/platform-client";
import { CONNECTION_HELP, call, connect } from "../connection.js";
import type { Io } from "../output/io.js";
import { parse, required } from "./args.js";
import { readPages } from "./follow.js";

const HELP = `x sandbox network ID: the sandbox's egress decisions (connections and DNS lookups, what
they were for, allowed or denied and by which rule), oldest first

  --follow, -f       keep printing new decisions until interrupted (or the sandbox is gone)

${CONNECTION_HELP}`;

const PAGE = 1000;

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
  return readPages({ name, id, follow: Boolean(values.follow), io }, async () => {
    const page = await call(
      conn,
      `reading the network decisions of sandbox ${id}`,
      conn.api.GET("/sandboxes/{sandboxID}/network/decisions", {
        params: { path: { sandboxID: id }, query: { after, limit: PAGE } },
      }),
    );
    for (const d of page.data.decisions) io.out(values.json ? `${JSON.stringify(d)}\n` : line(d));
    after = page.data.next;
    // a full page means more is waiting
    return { more: page.data.decisions.length === PAGE };
  });
}
