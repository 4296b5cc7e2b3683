import { createHash, randomBytes, timingSafeEqual } from "node:crypto";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, rename, rm, stat } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import path from "node:path";
import { PassThrough, Readable, Transform } from "node:stream";
import { pipeline } from "node:stream/promises";
import type { ReadableStream as WebReadableStream } from "node:stream/web";
import { sendError } from "../api/server.js";
import { CommandError } from "../lib/command.js";
import type { Logger } from "../lib/log.js";
import { spawnOwned } from "../lib/owned-process.js";
import type { LayerRecord, Store } from "../store/index.js";

/*
 * tar is spawned here rather than through the platform's spawner helper (lib/spawner.ts): the
 * helper only returns captured output, and layers are streamed, gigabytes at a time.
 */

/**
 * GNU tar flags that make the same tree give the same bytes: sorted names, numeric owners, no
 * atime/ctime, and pax header names without the PID tar puts in them by default. Overlay xattrs
 * (trusted.*), users' and file capabilities (ping's cap_net_raw) go along, as `cp -a` keeps them.
 */
const CANONICAL_TAR = [
  "--sort=name",
  "--format=posix",
  "--numeric-owner",
  "--xattrs",
  "--xattrs-include=trusted.*",
  "--xattrs-include=user.*",
  "--xattrs-include=security.capability",
  "--pax-option=exthdr.name=%d/PaxHeaders/%f,delete=atime,delete=ctime",
];

/**
 * Extraction as root: owners, modes, whiteout devices and overlay xattrs as they were. tar
 * stops reading at the archive's end marker, maybe before the stream's last padding: then its
 * stdin closes early and the transfer looks cut. `--ignore-zeros` makes it read to the end, so
 * every byte passes the digest.
 */
const EXTRACT_TAR = [
  "-x",
  "--ignore-zeros",
  "--numeric-owner",
  "--xattrs",
  "--xattrs-include=*",
  "-p",
  "--same-owner",
];

/** Keeps the end of a child's stderr (where tar explains itself) without growing without bound. */
function collect(stream: NodeJS.ReadableStream): () => string {
  let text = "";
  stream.setEncoding("utf8");
  stream.on("data", (chunk: string) => {
    text = (text + chunk).slice(-4096);
  });
  return () => text;
}

/**
 * A deterministic tar stream of `absDir`: the same tree gives the same bytes, so its sha256 is
 * the layer's digest on every node. The stream fails if tar does; destroying it kills tar.
 */
export function canonicalTar(absDir: string): Readable {
  const args = [...CANONICAL_TAR, "-C", absDir, "-cf", "-", "."];
  const child = spawnOwned("tar", args, { stdio: ["ignore", "pipe", "pipe"] });
  const stderr = collect(child.stderr!);
  const out = new PassThrough();
  // tar's exit code, not the end of its stdout, says whether the archive is whole
  child.stdout!.pipe(out, { end: false });
  child.on("error", (err) => out.destroy(new CommandError(["tar", ...args], null, err.message)));
  child.on("close", (code, signal) => {
    if (out.destroyed) return;
    if (code === 0 || (code === 1 && onlyChangedWhileRead(stderr()))) out.end();
    else out.destroy(new CommandError(["tar", ...args], code ?? signal, stderr()));
  });
  out.on("close", () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return out;
}

/**
 * tar's exit 1 with nothing but "file changed as we read it": a layer's files never change,
 * but their ctime does when another copy of the image is hard-linked (`cp -al`) meanwhile.
 * The archive is whole, and the receiver checks its digest anyway.
 */
function onlyChangedWhileRead(stderr: string): boolean {
  const lines = stderr.split("\n").filter((l) => l.trim() !== "");
  return lines.length > 0 && lines.every((l) => /file changed as we read it$/.test(l));
}

/** The digest a layer is published under: sha256 of its canonical tar stream, and that stream's length. */
export async function layerDigest(absDir: string): Promise<{ digest: string; bytes: number }> {
  const hash = createHash("sha256");
  let bytes = 0;
  for await (const chunk of canonicalTar(absDir)) {
    hash.update(chunk as Buffer);
    bytes += (chunk as Buffer).length;
  }
  return { digest: `sha256:${hash.digest("hex")}`, bytes };
}

/**
 * Layer paths as builds store them, relative to a data directory. Anything else could reach
 * outside the data directory, or a staging directory (dot names) still being written.
 */
function checkPath(rel: string): string {
  const ok =
    typeof rel === "string" &&
    /^(layers|images)\/./.test(rel) &&
    !path.isAbsolute(rel) &&
    !rel.includes("..") &&
    !rel.includes("\0") &&
    path.posix.normalize(rel) === rel &&
    !rel.endsWith("/") &&
    !rel.split("/").some((part) => part.startsWith("."));
  if (!ok)
    throw new Error(`bad layer path ${JSON.stringify(rel)}: must be relative, under layers/ or images/`);
  return rel;
}

async function isDir(abs: string): Promise<boolean> {
  return stat(abs).then(
    (s) => s.isDirectory(),
    () => false,
  );
}

/** An error's message with its cause's (fetch says "terminated" and keeps the why in its cause). */
function reason(err: unknown): string {
  const e = err as Error & { cause?: Error };
  return e.cause?.message ? `${e.message} (${e.cause.message})` : String(e.message ?? err);
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Compares secrets in constant time (their hashes have the same length whatever was sent). */
function sameSecret(given: string, expected: string): boolean {
  const digest = (s: string) => createHash("sha256").update(s).digest();
  return timingSafeEqual(digest(given), digest(expected));
}

export interface LayerSyncOptions {
  store: Store;
  dataDir: string;
  /** This node's id, as in the catalog's `layer_copies`. */
  nodeId: string;
  /** The cluster secret: what node-only routes take as `Authorization: Bearer <secret>`. */
  secret: string;
  log: Logger;
  /** A node's API base URL (e.g. `store.nodes.get(id)?.apiUrl`); undefined when unknown. */
  nodeUrl(nodeId: string): Promise<string | undefined>;
  /**
   * A directory every node mounts (NFS, a shared volume), where each layer is also kept as
   * `<hex digest>.tar`: a layer whose holders are all gone is still there.
   */
  sharedDir?: string;
}

/**
 * Layers across nodes: each node publishes the layers it holds with their digest, and a node
 * that lacks one fetches it from a holder over `GET /node/layers`, checks the digest, and keeps
 * the copy (and says so in the catalog) for the next sandbox that needs it.
 */
export class LayerSync {
  private readonly fetching = new Map<string, Promise<void>>();
  /** Digests in progress, chained: each reads a whole layer through tar, so one at a time. */
  private digests: Promise<unknown> = Promise.resolve();

  constructor(private readonly opts: LayerSyncOptions) {
    if (!opts.secret) throw new Error("LayerSync needs the cluster secret");
  }

  private abs(rel: string): string {
    return path.resolve(this.opts.dataDir, rel);
  }

  /** Records the layers this node holds (those of `paths` that exist here) in the catalog. */
  async publish(paths: string[]): Promise<void> {
    const { store, nodeId } = this.opts;
    for (const rel of paths) {
      checkPath(rel);
      if (!(await isDir(this.abs(rel)))) continue;
      let record = await store.layers.get(rel);
      if (record) await store.layers.addCopy(rel, nodeId);
      else {
        const next = this.digests.then(() => layerDigest(this.abs(rel)));
        this.digests = next.catch(() => undefined);
        const { digest, bytes } = await next;
        record = await store.layers.publish({ path: rel, digest, bytes }, nodeId);
      }
      if (this.opts.sharedDir) await this.archive(rel, record, this.opts.sharedDir);
    }
  }

  /** The shared store's copy of a layer: named by its digest, written once, checked as written. */
  private async archive(rel: string, record: LayerRecord, sharedDir: string): Promise<void> {
    const file = archiveOf(sharedDir, record);
    if (await exists(file)) return;
    const tmp = path.join(sharedDir, `.tmp-${randomBytes(8).toString("hex")}`);
    try {
      const { digest, bytes } = await hashed(canonicalTar(this.abs(rel)), createWriteStream(tmp));
      if (digest !== record.digest || bytes !== record.bytes) {
        throw new Error(`layer ${rel} here is not the one the catalog has (${digest}, not ${record.digest})`);
      }
      await rename(tmp, file);
      this.opts.log.info({ layer: rel, file }, "layer kept in the shared store");
    } finally {
      await rm(tmp, { force: true });
    }
  }

  /**
   * Makes every layer of `paths` present here, fetching the missing ones from nodes that hold
   * them. A layer no node holds yet is waited for up to `waitMs` (its build may still be
   * publishing it). Concurrent calls for one layer share its fetch.
   */
  async ensure(paths: string[], opts: { waitMs?: number } = {}): Promise<void> {
    for (const rel of paths) checkPath(rel);
    const waitMs = opts.waitMs ?? 60_000;
    const results = await Promise.allSettled(paths.map((rel) => this.ensureOne(rel, waitMs)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    if (failed) throw failed.reason;
  }

  private ensureOne(rel: string, waitMs: number): Promise<void> {
    let pending = this.fetching.get(rel);
    if (!pending) {
      pending = this.fetchMissing(rel, waitMs).finally(() => this.fetching.delete(rel));
      this.fetching.set(rel, pending);
    }
    return pending;
  }

  private async fetchMissing(rel: string, waitMs: number): Promise<void> {
    const { store, nodeId, log } = this.opts;
    const deadline = Date.now() + waitMs;
    for (;;) {
      // a layer that exists is complete: layers are renamed into place
      if (await isDir(this.abs(rel))) return;
      const record = await store.layers.get(rel);
      const holders = record ? (await store.layers.holders(rel)).filter((n) => n !== nodeId) : [];
      const errors: Error[] = [];
      for (const holder of holders) {
        const url = await this.opts.nodeUrl(holder);
        if (!url || !record) continue;
        try {
          await this.fetchFrom(rel, record, holder, url);
          await store.layers.addCopy(rel, nodeId);
          log.info({ layer: rel, from: holder, bytes: record.bytes }, "layer fetched");
          return;
        } catch (err) {
          log.warn({ layer: rel, from: holder, err }, "layer fetch failed");
          errors.push(err as Error);
        }
      }
      const shared = this.opts.sharedDir && record && archiveOf(this.opts.sharedDir, record);
      if (shared && (await exists(shared))) {
        await this.receive(rel, record!, `layer ${rel} from the shared store`, async () =>
          createReadStream(shared),
        );
        await store.layers.addCopy(rel, nodeId);
        log.info({ layer: rel, from: shared, bytes: record!.bytes }, "layer fetched");
        return;
      }
      // holders that answered wrongly will not do better on a retry; those not there yet might
      if (errors.length === 1) throw errors[0];
      if (errors.length > 1) throw new Error(errors.map((e) => e.message).join("; "));
      if (Date.now() >= deadline) throw new Error(`layer ${rel} is on no node that answers`);
      await sleep(Math.min(1000, Math.max(0, deadline - Date.now())));
    }
  }

  /** The layer from `holder`'s `GET /node/layers`. */
  private fetchFrom(rel: string, record: LayerRecord, holder: string, baseUrl: string): Promise<void> {
    const what = `layer ${rel} from node ${holder}`;
    return this.receive(rel, record, what, async () => {
      const url = `${baseUrl.replace(/\/+$/, "")}/node/layers?path=${encodeURIComponent(rel)}`;
      const res = await fetch(url, { headers: { authorization: `Bearer ${this.opts.secret}` } }).catch(
        (err) => {
          throw new Error(`${what}: ${reason(err)}`);
        },
      );
      if (!res.ok || !res.body) {
        const body = await res.text().catch(() => "");
        throw new Error(`${what}: HTTP ${res.status} ${body.slice(0, 500)}`);
      }
      return Readable.fromWeb(res.body as WebReadableStream<Uint8Array>);
    });
  }

  /** Streams a layer's tar through sha256 and `tar -x` into a staging directory beside its place, then renames it in. */
  private async receive(
    rel: string,
    record: LayerRecord,
    what: string,
    open: () => Promise<Readable>,
  ): Promise<void> {
    const dest = this.abs(rel);
    // beside the destination: the same filesystem, so the rename is atomic
    await mkdir(path.dirname(dest), { recursive: true });
    const staging = path.join(path.dirname(dest), `.fetch-${randomBytes(8).toString("hex")}`);
    await mkdir(staging, { mode: 0o700 });
    try {
      const body = await open();
      const tap = hashingTap();
      await extract(body, tap.stream, staging).catch((err) => {
        throw new Error(`${what}: the transfer broke after ${tap.result().bytes} bytes: ${reason(err)}`);
      });
      const { digest, bytes } = tap.result();
      if (digest !== record.digest || bytes !== record.bytes) {
        throw new Error(
          `${what}: digest mismatch: received ${digest} (${bytes} bytes), the catalog has ${record.digest} (${record.bytes} bytes)`,
        );
      }
      try {
        await rename(staging, dest);
      } catch (err) {
        // another process put the same layer in place meanwhile: same digest, keep theirs
        if (!(await isDir(dest))) throw err;
      }
    } finally {
      await rm(staging, { recursive: true, force: true });
    }
  }

  /**
   * The node route `GET /node/layers?path=<rel>`: this node's copy of a layer as its canonical
   * tar stream. Returns false for any other URL (for the caller's next handler).
   */
  handler(): (req: IncomingMessage, res: ServerResponse) => boolean {
    return (req, res) => {
      const url = new URL(req.url ?? "/", "http://node");
      if (url.pathname !== "/node/layers") return false;
      if (req.method !== "GET") {
        sendError(res, 405, "only GET is allowed here", { Allow: "GET" });
        return true;
      }
      if (!sameSecret(req.headers.authorization ?? "", `Bearer ${this.opts.secret}`)) {
        sendError(res, 401, "node routes need the cluster secret as a bearer token");
        return true;
      }
      const rel = url.searchParams.get("path") ?? "";
      try {
        checkPath(rel);
      } catch (err) {
        sendError(res, 400, (err as Error).message);
        return true;
      }
      void this.serve(rel, res).catch((err: Error) => {
        this.opts.log.error({ layer: rel, err }, "layer serve failed");
        if (res.headersSent) res.destroy(err);
        else sendError(res, 500, err.message);
      });
      return true;
    };
  }

  private async serve(rel: string, res: ServerResponse): Promise<void> {
    if (!(await isDir(this.abs(rel)))) {
      sendError(res, 404, `node ${this.opts.nodeId} has no layer ${rel}`);
      return;
    }
    res.writeHead(200, { "Content-Type": "application/x-tar" });
    try {
      // a failing tar or a departing client destroys both ends: the reader sees a cut stream
      await pipeline(canonicalTar(this.abs(rel)), res);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ERR_STREAM_PREMATURE_CLOSE") {
        this.opts.log.debug({ layer: rel }, "layer reader went away");
      } else {
        throw err;
      }
    }
  }
}

/** Where the shared store keeps a layer: `<hex digest>.tar`. */
function archiveOf(sharedDir: string, record: LayerRecord): string {
  return path.join(sharedDir, `${record.digest.replace(/^sha256:/, "")}.tar`);
}

const exists = (file: string) =>
  stat(file).then(
    () => true,
    () => false,
  );

/** A stream that passes bytes on, hashing and counting them. */
function hashingTap(): { stream: Transform; result(): { digest: string; bytes: number } } {
  const hash = createHash("sha256");
  let bytes = 0;
  const stream = new Transform({
    transform(chunk: Buffer, _enc, done) {
      hash.update(chunk);
      bytes += chunk.length;
      done(null, chunk);
    },
  });
  return { stream, result: () => ({ digest: `sha256:${hash.copy().digest("hex")}`, bytes }) };
}

/** Copies `from` to `to`, returning the sha256 and length of what passed. */
async function hashed(from: Readable, to: NodeJS.WritableStream): Promise<{ digest: string; bytes: number }> {
  const tap = hashingTap();
  await pipeline(from, tap.stream, to);
  return tap.result();
}

/** Feeds `body` through `tap` into `tar -x` in `dir`; fails on a broken stream or a failing tar. */
async function extract(body: Readable, tap: Transform, dir: string): Promise<void> {
  const args = [...EXTRACT_TAR, "-C", dir, "-f", "-"];
  const child = spawnOwned("tar", args, { stdio: ["pipe", "ignore", "pipe"] });
  const stderr = collect(child.stderr!);
  const exited = new Promise<number | string | null>((resolve) => {
    child.on("error", (err) => resolve(err.message));
    child.on("close", (code, signal) => resolve(code ?? signal));
  });
  try {
    await pipeline(body, tap, child.stdin!);
  } catch (err) {
    child.kill("SIGKILL");
    await exited;
    const tar = stderr().trim();
    throw new Error(`${reason(err)}${tar ? `; ${tar.replace(/\s+/g, " ")}` : ""}`);
  }
  const code = await exited;
  if (code !== 0) throw new CommandError(["tar", ...args], code, stderr());
}
