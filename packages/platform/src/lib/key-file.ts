import { randomBytes } from "node:crypto";
import { chmod, link, mkdir, readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";

/**
 * A key the platform keeps in a file of its own, apart from the database: the operator's
 * (`file`), or one made on first start under `<dataDir>/keys/` (the directory 0700, the file
 * 0600). Two processes starting at once on one data directory end up with the same key: the
 * file appears whole (written beside it, then linked in place) and the second reads the first's.
 */
export async function loadOrCreateKeyFile(opts: {
  /** The operator's file: it must exist. */
  file?: string;
  dataDir: string;
  /** The file's name under `<dataDir>/keys/`. */
  name: string;
  /** The content of a new key. */
  create: () => Promise<Buffer> | Buffer;
}): Promise<{ content: Buffer; file: string; created: boolean }> {
  if (opts.file) return { content: await readKeyFile(opts.file), file: opts.file, created: false };
  const dir = path.join(opts.dataDir, "keys");
  const file = path.join(dir, opts.name);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  await chmod(dir, 0o700);
  try {
    const content = await readFile(file);
    // readable by root alone, whatever left it otherwise (a restore, a copy)
    await chmod(file, 0o600);
    return { content, file, created: false };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
  }
  const temp = `${file}.${process.pid}.${randomBytes(4).toString("hex")}`;
  await writeFile(temp, await opts.create(), { mode: 0o600, flag: "wx" });
  try {
    await link(temp, file);
    return { content: await readFile(file), file, created: true };
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    return { content: await readFile(file), file, created: false };
  } finally {
    await rm(temp, { force: true });
  }
}

async function readKeyFile(file: string): Promise<Buffer> {
  try {
    return await readFile(file);
  } catch (err) {
    throw new Error(`cannot read the key file ${file}: ${(err as Error).message}`);
  }
}
