import { mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { CommandError, command, commandLines, requireBinary } from "../../lib/command.js";
import { KeyedLock } from "../../lib/keyed-lock.js";
import { formatReference, type ImageReference } from "./reference.js";
import { type PullSource, pullSources, type RegistrySettings } from "./settings.js";

/** What the client sends for a private registry, as basic credentials. */
export interface RegistryCredentials {
  username: string;
  password: string;
}

/** The parts of an OCI image config that apply to a template (Docker's semantics). */
export interface ImageConfig {
  config?: { User?: string; WorkingDir?: string; Env?: string[] };
}

/** An image pulled into the shared layout, while the caller holds it. */
export interface PulledImage {
  /** `<layout>:<name>`, what umoci opens. */
  image: string;
  /** `sha256:…` of the image's manifest as stored. */
  manifestDigest: string;
  config: ImageConfig;
}

/** A pull that failed, with a message for the person who asked for the build. */
export class PullError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "PullError";
  }
}

interface OciIndex {
  manifests?: { digest: string; annotations?: Record<string, string> }[];
}

interface Manifest {
  config: { digest: string };
  layers: { digest: string }[];
}

const REF_NAME_KEY = "org.opencontainers.image.ref.name";
// An OCI ref.name as umoci and skopeo accept it (image-spec annotations).
const REF_NAME =
  /^[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*(?:\/[A-Za-z0-9]+(?:(?:[-._:@+]|--)[A-Za-z0-9]+)*)*$/;
const PULL_TIMEOUT = "30m";

/** The last fatal message of skopeo (logrus: `level=fatal msg="…"`), else its last line. */
function skopeoReason(output: string): string {
  const lines = output.split("\n").filter((l) => l.trim());
  for (const line of [...lines].reverse()) {
    const m = /level=fatal msg="((?:[^"\\]|\\.)*)"/.exec(line);
    if (m) return m[1]!.replace(/\\(.)/g, "$1");
  }
  return lines.at(-1)?.trim() ?? "no output";
}

/**
 * Turns skopeo's failure into what a user can act on: an unknown image or tag, refused or
 * missing credentials, a registry that cannot be reached (with why), or skopeo's own words.
 */
export function describePullFailure(
  o: { image: string; source: Pick<PullSource, "registry">; withCredentials: boolean },
  output: string,
): string {
  const reason = skopeoReason(output);
  const at = o.source.registry;
  if (/manifest unknown|name unknown|not found|no such image/i.test(reason))
    return `image '${o.image}' not found in registry ${at}: no such repository or tag`;
  if (
    /unauthorized|authentication required|invalid username\/password|access to the resource is denied|status 401|status 403/i.test(
      reason,
    )
  ) {
    return o.withCredentials
      ? `registry ${at} refused the credentials for '${o.image}' (unauthorized): check the username and password`
      : `registry ${at} requires credentials for '${o.image}' (unauthorized): pass them with fromImage(image, { username, password })`;
  }
  if (/server gave HTTP response to HTTPS client/.test(reason))
    return `registry ${at} speaks plain HTTP: the platform's operator can allow it with 'x serve --insecure-registry ${at}'`;
  if (/x509|certificate/i.test(reason))
    return `registry ${at} has a TLS certificate this host does not trust (${reason.replace(/^.*?(x509: )/, "$1")})`;
  const net =
    /(connection refused|no such host|i\/o timeout|network is unreachable|no route to host|connection reset by peer|server misbehaving|context deadline exceeded)/i.exec(
      reason,
    );
  if (net) return `cannot reach registry ${at} to pull '${o.image}': ${net[1]!.toLowerCase()}`;
  return `pulling '${o.image}' failed: ${reason}`;
}

/**
 * Images pulled from registries, kept in one OCI layout (`dir`) with an entry per reference:
 * skopeo copies into it and skips every blob already there, so a second template on the same
 * image fetches its manifest and config again but none of its layers. Pulls are serialised
 * (skopeo rewrites the layout's index, and umoci reads it); blobs a moved tag left behind are
 * collected after the pull that moved it.
 */
export class RegistryCache {
  private readonly lock = new KeyedLock();

  constructor(
    private readonly dir: string,
    private readonly settings: RegistrySettings,
  ) {}

  /** Pulls `ref` and runs `use` on it before any other pull may change the layout. */
  withImage<T>(
    ref: ImageReference,
    o: { credentials?: RegistryCredentials; log(line: string): void; signal?: AbortSignal },
    use: (image: PulledImage) => Promise<T>,
  ): Promise<T> {
    return this.lock.run(this.dir, async () => {
      const skopeo = await requireBinary("skopeo", "apt-get install skopeo");
      const umoci = await requireBinary("umoci", "apt-get install umoci");
      const image = formatReference(ref);
      const name = REF_NAME.test(image) ? image : image.replace(/[^A-Za-z0-9]+/g, "-");
      const before = await this.blobs();
      await this.pull(skopeo, ref, name, o);
      const manifestDigest = await this.entry(name);
      if (!manifestDigest) throw new PullError(`pulling '${image}' left no image in ${this.dir}`);
      const manifest = JSON.parse(await this.blob(manifestDigest)) as Manifest;
      const config = JSON.parse(await this.blob(manifest.config.digest)) as ImageConfig;
      const cached = manifest.layers.filter((l) => before.has(l.digest)).length;
      o.log(
        `${image}: ${manifest.layers.length} layers, ${cached} already cached, ${manifest.layers.length - cached} pulled (manifest ${manifestDigest.slice(0, 19)})`,
      );
      if (await this.dropUntagged()) await command(umoci, ["gc", "--layout", this.dir]);
      return use({ image: `${this.dir}:${name}`, manifestDigest, config });
    });
  }

  /** Tries the registry's mirrors in order, then the registry; a mirror's failure is logged and passed over. */
  private async pull(
    skopeo: string,
    ref: ImageReference,
    name: string,
    o: { credentials?: RegistryCredentials; log(line: string): void; signal?: AbortSignal },
  ): Promise<void> {
    const image = formatReference(ref);
    const sources = pullSources(ref, this.settings);
    // A home of its own: credentials come from the build request only, never from the
    // host's own login files (~/.docker/config.json, auth.json), which no team may borrow.
    const home = await mkdtemp(path.join(os.tmpdir(), "x-pull-"));
    try {
      const authfile = path.join(home, "auth.json");
      const auths: Record<string, { auth: string }> = {};
      if (o.credentials) {
        const auth = Buffer.from(`${o.credentials.username}:${o.credentials.password}`).toString("base64");
        for (const s of sources) auths[s.registry] = { auth };
      }
      await writeFile(authfile, JSON.stringify({ auths }), { mode: 0o600 });
      const env = {
        PATH: process.env.PATH,
        HOME: home,
        XDG_RUNTIME_DIR: home,
        XDG_CONFIG_HOME: home,
        DOCKER_CONFIG: home,
      };
      for (const [i, source] of sources.entries()) {
        o.log(
          `pulling ${source.ref.replace(/^docker:\/\//, "")}${source.mirror ? ` (mirror of ${ref.registry})` : ""}`,
        );
        const args = [
          "--command-timeout",
          PULL_TIMEOUT,
          "copy",
          "--authfile",
          authfile,
          ...(source.insecure ? ["--src-tls-verify=false"] : []),
          source.ref,
          `oci:${this.dir}:${name}`,
        ];
        try {
          // skopeo's own log lines (`time=… level=…`) are read on failure, not shown as progress
          const progress = (line: string) => {
            if (!line.startsWith("time=")) o.log(line);
          };
          await commandLines(skopeo, args, progress, { env, signal: o.signal });
          return;
        } catch (err) {
          if (o.signal?.aborted) throw new PullError(`the platform shut down while pulling '${image}'`);
          const output = err instanceof CommandError ? err.stderr : String(err);
          const message = describePullFailure(
            { image, source, withCredentials: o.credentials !== undefined },
            output,
          );
          if (i === sources.length - 1) throw new PullError(message);
          o.log(`mirror ${source.registry} failed (${message}); trying the next source`);
        }
      }
    } finally {
      await rm(home, { recursive: true, force: true });
    }
  }

  /** Digests of the blobs in the layout now. */
  private async blobs(): Promise<Set<string>> {
    const files = await readdir(path.join(this.dir, "blobs", "sha256")).catch(() => []);
    return new Set(files.map((f) => `sha256:${f}`));
  }

  private async index(): Promise<OciIndex | undefined> {
    const text = await readFile(path.join(this.dir, "index.json"), "utf8").catch(() => undefined);
    return text ? (JSON.parse(text) as OciIndex) : undefined;
  }

  private async entry(name: string): Promise<string | undefined> {
    return (await this.index())?.manifests?.find((m) => m.annotations?.[REF_NAME_KEY] === name)?.digest;
  }

  /**
   * Removes the manifests a moved tag left in the index: skopeo keeps the old one, untagged,
   * which would keep its blobs from ever being collected. Says whether there were any.
   */
  private async dropUntagged(): Promise<boolean> {
    const index = await this.index();
    const kept = index?.manifests?.filter((m) => m.annotations?.[REF_NAME_KEY]) ?? [];
    if (!index || kept.length === (index.manifests?.length ?? 0)) return false;
    const file = path.join(this.dir, "index.json");
    await writeFile(`${file}.tmp`, JSON.stringify({ ...index, manifests: kept }));
    await rename(`${file}.tmp`, file);
    return true;
  }

  private blob(digest: string): Promise<string> {
    const [algorithm, hex] = digest.split(":");
    return readFile(path.join(this.dir, "blobs", algorithm!, hex!), "utf8");
  }
}
