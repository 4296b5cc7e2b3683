import { CliError } from "../connection.js";
import type { Io } from "../output/io.js";

const POLL_MS = 1000;

/**
 * Reads a sandbox's entries page by page and, with `follow`, polls for new ones until the
 * sandbox is gone (killed, or timed out: a 404 after the first page) or the process is
 * interrupted. `page` prints what it read and says whether more is waiting right away.
 */
export async function readPages(
  o: { name: string; id: string; follow: boolean; io: Io },
  page: () => Promise<{ more: boolean }>,
): Promise<number> {
  for (let polls = 0; ; polls++) {
    const read = await page().catch((err: unknown) => {
      if (polls > 0 && err instanceof CliError && err.status === 404) return undefined;
      throw err;
    });
    if (!read) {
      o.io.err(`${o.name}: sandbox ${o.id} is gone\n`);
      return 0;
    }
    if (read.more) continue;
    if (!o.follow) return 0;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}
