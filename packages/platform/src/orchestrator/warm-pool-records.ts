import { mkdir, readdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Logger } from "../lib/log.js";
import type { SandboxHostPort } from "../sandbox/host-port.js";
import type { PoolMember } from "./warm-pool-types.js";

/**
 * The warm pool's records of its members on disk, one file each in `recordDir`: what the next
 * start (or `x cleanup`) removes when a platform ended without stopping.
 */

export async function rememberMember(recordDir: string, member: PoolMember): Promise<void> {
  await mkdir(recordDir, { recursive: true });
  await writeFile(
    path.join(recordDir, `${member.id}.json`),
    JSON.stringify({ id: member.id, runtime: member.runtime }),
  );
}

export async function forgetMember(recordDir: string, id: string): Promise<void> {
  await rm(path.join(recordDir, `${id}.json`), { force: true });
}

/**
 * Removes the members a platform that ended without stopping left (their records are in
 * `recordDir`): at the next start, or by `x cleanup` right after a kill.
 */
export async function discardPoolLeftovers(
  recordDir: string,
  host: Pick<SandboxHostPort, "destroy">,
  log: Logger,
): Promise<void> {
  const names = await readdir(recordDir).catch(() => [] as string[]);
  for (const name of names.filter((n) => n.endsWith(".json"))) {
    const file = path.join(recordDir, name);
    try {
      const { id, runtime } = JSON.parse(await readFile(file, "utf8")) as PoolMember;
      await host.destroy({ id, runtime });
      log.info({ sandboxId: id }, "removed a warm pool member left by a previous run");
    } catch (err) {
      log.warn({ file, err }, "could not remove a leftover warm pool member");
    }
    await rm(file, { force: true });
  }
}
