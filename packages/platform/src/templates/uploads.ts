import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createWriteStream } from "node:fs";
import { mkdir, readdir, readFile, rename, rm, stat, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { KeyedLock } from "../lib/keyed-lock.js";
import { DomainError, forbidden } from "../model/errors.js";

/** How long an upload link stays valid. */
export const LINK_TTL_SECONDS = 3600;

/** What a team may keep of COPY archives (its limits `uploads` and `uploadsMB`). */
export interface UploadBudget {
  count: number;
  bytes: number;
}

/**
 * An archive used (uploaded, or found present by a link or a build) this recently is never
 * removed to make room: a build may still be about to read it, as long as its link lives.
 */
const IN_USE_MS = LINK_TTL_SECONDS * 1000;

const mib = (bytes: number) => Math.ceil(bytes / 2 ** 20);

export class UploadTooLarge extends DomainError {
  constructor(readonly maxBytes: number) {
    super("too_large", `upload larger than ${maxBytes} bytes: split the files over several COPY steps`);
    this.name = "UploadTooLarge";
  }
}

/**
 * The archives of COPY steps, stored per team under their content hash
 * (`<dataDir>/uploads/<team>/<hash>`), and the signed links the client PUTs them to. The client
 * sends no API key with the PUT, so the link authorises itself: an HMAC over template, hash and
 * expiry with a key that never leaves the data directory.
 *
 * They are a cache, as the client treats them (it uploads what is not `present`): past a team's
 * budget its least recently used archives go to make room for a new one, those used within
 * the hour excepted.
 */
export class BuildUploads {
  /** One team's archives change (room made, one added) one at a time. */
  private readonly teamLock = new KeyedLock();

  private constructor(
    private readonly dir: string,
    private readonly key: Buffer,
  ) {}

  static async open(dataDir: string): Promise<BuildUploads> {
    const keyFile = path.join(dataDir, "secrets", "upload-signing-key");
    let key = await readFile(keyFile).catch(() => undefined);
    if (!key || key.length < 32) {
      key = randomBytes(32);
      await mkdir(path.dirname(keyFile), { recursive: true, mode: 0o700 });
      await writeFile(`${keyFile}.tmp`, key, { mode: 0o600 });
      await rename(`${keyFile}.tmp`, keyFile);
    }
    const dir = path.join(dataDir, "uploads");
    await mkdir(dir, { recursive: true, mode: 0o700 });
    return new BuildUploads(dir, key);
  }

  path(teamId: string, hash: string): string {
    return path.join(this.dir, teamId, hash);
  }

  /** Whether the archive is stored; a stored one counts as used now (it is kept the longest). */
  async has(teamId: string, hash: string): Promise<boolean> {
    const now = new Date();
    return utimes(this.path(teamId, hash), now, now).then(
      () => true,
      () => false,
    );
  }

  private sign(templateId: string, hash: string, expires: number): string {
    return createHmac("sha256", this.key).update(`${templateId}\n${hash}\n${expires}`).digest("base64url");
  }

  /** The token of an upload link: `<expiry>.<signature>`. */
  token(templateId: string, hash: string, nowMs = Date.now()): string {
    const expires = Math.floor(nowMs / 1000) + LINK_TTL_SECONDS;
    return `${expires}.${this.sign(templateId, hash, expires)}`;
  }

  verify(templateId: string, hash: string, token: string, nowMs = Date.now()): boolean {
    const [expiresText, signature] = token.split(".");
    const expires = Number(expiresText);
    if (!Number.isInteger(expires) || !signature || expires * 1000 < nowMs) return false;
    const expected = Buffer.from(this.sign(templateId, hash, expires));
    const given = Buffer.from(signature);
    return expected.length === given.length && timingSafeEqual(expected, given);
  }

  /**
   * Stores the archive atomically: a reader never sees half an upload. Within `budget` (none
   * when not given): the team's least recently used archives go to make room, and a 403 says
   * so when those used within the hour leave none.
   */
  async receive(
    teamId: string,
    hash: string,
    body: Readable,
    maxArchiveBytes: number,
    budget?: UploadBudget,
  ): Promise<void> {
    const maxBytes = Math.min(maxArchiveBytes, budget?.bytes ?? maxArchiveBytes);
    // a request that declares more is refused before a byte is read (the e2b client declares it)
    const declared = Number(
      (body as Readable & { headers?: Record<string, unknown> }).headers?.["content-length"],
    );
    if (declared > maxBytes) throw new UploadTooLarge(maxBytes);
    if (budget && declared > 0)
      await this.teamLock.run(teamId, () => this.makeRoom(teamId, hash, declared, budget));
    const target = this.path(teamId, hash);
    await mkdir(path.dirname(target), { recursive: true, mode: 0o700 });
    const partial = `${target}.${randomBytes(6).toString("hex")}.part`;
    let size = 0;
    try {
      await pipeline(
        body,
        async function* (source: AsyncIterable<Buffer>) {
          for await (const chunk of source) {
            size += chunk.length;
            if (size > maxBytes) throw new UploadTooLarge(maxBytes);
            yield chunk;
          }
        },
        createWriteStream(partial, { mode: 0o600 }),
      );
      await this.teamLock.run(teamId, async () => {
        if (budget) await this.makeRoom(teamId, hash, size, budget);
        await rename(partial, target);
      });
    } finally {
      await rm(partial, { force: true });
    }
  }

  /**
   * Removes the team's least recently used archives (not `hash`, which the new one replaces)
   * until one more of `incoming` bytes fits its budget; 403 when what is left was used within
   * the hour.
   */
  private async makeRoom(
    teamId: string,
    hash: string,
    incoming: number,
    budget: UploadBudget,
  ): Promise<void> {
    const dir = path.dirname(this.path(teamId, hash));
    const names = (await readdir(dir).catch(() => [] as string[])).filter(
      (n) => n !== hash && !n.endsWith(".part"),
    );
    const stored = await Promise.all(
      names.map(async (name) => {
        const st = await stat(path.join(dir, name)).catch(() => undefined);
        return st?.isFile() ? { name, bytes: st.size, usedMs: st.mtimeMs } : undefined;
      }),
    );
    const archives = stored.flatMap((a) => a ?? []).sort((a, b) => a.usedMs - b.usedMs);
    let count = archives.length;
    let bytes = archives.reduce((sum, a) => sum + a.bytes, 0);
    const fits = () => count + 1 <= budget.count && bytes + incoming <= budget.bytes;
    for (const archive of archives) {
      if (fits() || Date.now() - archive.usedMs < IN_USE_MS) break;
      await rm(path.join(dir, archive.name), { force: true });
      count--;
      bytes -= archive.bytes;
    }
    if (!fits())
      throw forbidden(
        `your team keeps ${count} build archives (${mib(bytes)} MiB) used within the last hour; one more of ${mib(incoming)} MiB would pass its limit of ${budget.count} archives and ${mib(budget.bytes)} MiB: retry in a while, or ask the platform's operator to raise it`,
      );
  }
}
