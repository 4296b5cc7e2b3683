import { readFile } from "node:fs/promises";

/** Where a TCP connection redirected to a local port was originally going. */
export interface Destination {
  ip: string;
  port: number;
}

const CONNTRACK = "/proc/net/nf_conntrack";

/**
 * The original destination of a connection the firewall redirected here, read from the
 * kernel's connection tracking table (Node has no SO_ORIGINAL_DST): the entry whose original
 * direction comes from `client` and whose reply comes from our `localPort`. Reading the table
 * costs a few milliseconds per thousand entries; it is done once per redirected connection.
 */
export async function originalDestination(
  client: { ip: string; port: number },
  localPort: number,
  file = CONNTRACK,
): Promise<Destination | undefined> {
  const table = await readFile(file, "latin1");
  const needle = `src=${client.ip} `;
  for (const line of table.split("\n")) {
    if (!line.includes(needle) || !line.includes(` sport=${client.port} `)) continue;
    const d = parseEntry(line);
    if (
      d &&
      d.original.src === client.ip &&
      d.original.sport === client.port &&
      d.reply.sport === localPort
    ) {
      return { ip: d.original.dst, port: d.original.dport };
    }
  }
  return undefined;
}

interface Tuple {
  src: string;
  dst: string;
  sport: number;
  dport: number;
}

/** One TCP line of nf_conntrack: its original and reply tuples. */
export function parseEntry(line: string): { original: Tuple; reply: Tuple } | undefined {
  if (!/\btcp\b/.test(line)) return undefined;
  const fields = [...line.matchAll(/\b(src|dst|sport|dport)=(\S+)/g)].map((m) => m[2]!);
  if (fields.length < 8) return undefined;
  const tuple = (i: number): Tuple => ({
    src: fields[i]!,
    dst: fields[i + 1]!,
    sport: Number(fields[i + 2]),
    dport: Number(fields[i + 3]),
  });
  return { original: tuple(0), reply: tuple(4) };
}
