import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { createWriteStream } from "node:fs";
import { access, mkdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import type { Readable } from "node:stream";
import { pipeline } from "node:stream/promises";
import { DomainError } from "../model/errors.js";

/** How long an upload link stays valid. */
export const LINK_TTL_SECONDS = 3600;

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
 */
export class BuildUploads {
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

  async has(teamId: string, hash: string): Promise<boolean> {
    return access(this.path(teamId, hash)).then(
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

  /** Stores the archive atomically: a reader never sees half an upload. */
  async receive(teamId: string, hash: string, body: Readable, maxBytes: number): Promise<void> {
    // a request that declares more is refused before a byte is read (the e2b client declares it)
    const declared = Number(
      (body as Readable & { headers?: Record<string, unknown> }).headers?.["content-length"],
    );
    if (declared > maxBytes) throw new UploadTooLarge(maxBytes);
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
      await rename(partial, target);
    } finally {
      await rm(partial, { force: true });
    }
  }
}
