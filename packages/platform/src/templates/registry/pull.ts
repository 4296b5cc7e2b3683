import { mkdtemp, readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { readFileAtMost } from "../../lib/bounded-read.js";
import { CommandError, command, commandLines, requireBinary } from "../../lib/command.js";
import { KeyedLock } from "../../lib/keyed-lock.js";
import type { Logger } from "../../lib/log.js";
import {
  canonicalHost,
  DestinationGuard,
  describeRefusal,
  ResolveError,
} from "../../network/destination-guard.js";
import { type LoopbackForward, PullNetwork } from "./pull-netns.js";
import { type ProxyOutcome, PullProxy } from "./pull-proxy.js";
import { formatReference, type ImageReference, isLoopbackRegistry } from "./reference.js";
import { type PullSource, pullSources, type RegistrySettings, registryEndpoint } from "./settings.js";

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
/** The most of a manifest or config blob read: 4 MiB, the size registries accept for a manifest. */
const BLOB_JSON_MAX_BYTES = 4 * 1024 * 1024;

/** The last fatal message of skopeo (logrus: `level=fatal msg="…"`), else its last line. */
function skopeoReason(output: string): string {
  const lines = output.split("\n").filter((l) => l.trim());
  for (const line of [...lines].reverse()) {
    const m = /level=fatal msg="((?:[^"\\]|\\.)*)"/.exec(line);
    if (m) return m[1]!.replace(/\\(.)/g, "$1");
  }
  return lines.at(-1)?.trim() ?? "no output";
}

/** What a build's log says when the platform refused a registry a tenant named, and how to allow it. */
function refusedRegistry(registry: string, why: string): string {
  return `registry ${registry} is not allowed: ${why}; the platform's operator can allow it with 'x serve --allow-private-registry ${registry}'`;
}

/** The x509 failures worth telling apart, in words of the platform's choosing (never the registry's). */
const TLS_FAILURES: Array<[RegExp, string]> = [
  [/unknown authority/i, "certificate signed by an unknown authority"],
  [
    /not valid for|doesn't contain any IP SANs|certificate is valid for/i,
    "certificate not valid for this name",
  ],
  [/expired|not yet valid/i, "certificate expired or not yet valid"],
];

/**
 * Turns a failed pull into what a user can act on, in the platform's own words only (a
 * registry's answer or an internal service's never reaches the build log): a connection the
 * proxy refused or could not make (`outcomes`), an unknown image or tag, refused or missing
 * credentials, plain HTTP, a TLS failure, a registry that cannot be reached (and why).
 */
export function describePullFailure(
  o: { image: string; source: Pick<PullSource, "registry">; withCredentials: boolean },
  output: string,
  outcomes: readonly ProxyOutcome[] = [],
): string {
  const at = o.source.registry;
  const source = registryEndpoint(at);
  // the registry itself: its port, or without one 443 and 80 (plain HTTP)
  const isSource = (x: ProxyOutcome) =>
    canonicalHost(x.host) === canonicalHost(source.host) &&
    (x.port === source.port || (!/:\d+$/.test(at) && x.port === 80));
  const refused = outcomes.find((x) => "refused" in x);
  if (refused && "refused" in refused) {
    const why = describeRefusal(refused.host, {
      allowed: false,
      literal: refused.literal,
      kind: refused.refused,
    });
    return isSource(refused)
      ? refusedRegistry(at, why)
      : `registry ${at} sent the pull of '${o.image}' elsewhere (a token service or a redirect), and ${why}: the platform does not connect there for tenants`;
  }
  const failed = outcomes.find((x) => "failed" in x);
  if (failed && "failed" in failed) {
    return isSource(failed)
      ? `cannot reach registry ${at} to pull '${o.image}': ${failed.failed}`
      : `cannot reach ${failed.host}, where registry ${at} sent the pull of '${o.image}' (a token service or a redirect): ${failed.failed}`;
  }
  const reason = skopeoReason(output);
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
  if (/x509|certificate|tls:/i.test(reason)) {
    const tls = TLS_FAILURES.find(([pattern]) => pattern.test(reason))?.[1] ?? "TLS handshake failed";
    return `registry ${at} failed TLS for '${o.image}': ${tls}`;
  }
  if (/no image found in (?:manifest list|image index) for architecture|no matching manifest/i.test(reason))
    return `image '${o.image}' has no variant for this host's platform (linux/${process.arch === "arm64" ? "arm64" : "amd64"})`;
  const net =
    /(connection refused|no such host|i\/o timeout|network is unreachable|no route to host|connection reset by peer|server misbehaving|context deadline exceeded)/i.exec(
      reason,
    );
  if (net) return `cannot reach registry ${at} to pull '${o.image}': ${net[1]!.toLowerCase()}`;
  const status = /(?:status code|StatusCode:?)\s*(\d{3})/i.exec(reason);
  if (status) return `registry ${at} answered HTTP ${status[1]} to the pull of '${o.image}'`;
  return `pulling '${o.image}' from registry ${at} failed: its answer was not understood (the platform's log has skopeo's words)`;
}

/** skopeo's progress lines, the only ones of its output a build's log shows. */
const PROGRESS =
  /^(?:Getting image source signatures|Copying (?:blob|config) [\w:]+|Writing manifest to image destination|Storing signatures)/;

/**
 * Images pulled from registries, kept in one OCI layout (`dir`) with an entry per reference:
 * skopeo copies into it and skips every blob already there, so a second template on the same
 * image fetches its manifest and config again but none of its layers. Pulls are serialised
 * (skopeo rewrites the layout's index, and umoci reads it); blobs a moved tag left behind are
 * collected after the pull that moved it.
 */
export class RegistryCache {
  private readonly lock = new KeyedLock();
  private readonly guard: DestinationGuard;

  constructor(
    private readonly dir: string,
    private readonly settings: RegistrySettings,
    private readonly o: {
      /** Every address of a name; the host's resolver when unset (see DestinationGuard). */
      resolve?(name: string): Promise<string[]>;
      /** The operator's log: skopeo's own words on a failure, which builds' logs do not show. */
      log?: Logger;
    } = {},
  ) {
    this.guard = new DestinationGuard({
      allow: settings.allowed,
      ...(o.resolve ? { resolve: o.resolve } : {}),
    });
  }

  /** Pulls `ref` and runs `use` on it before any other pull may change the layout. */
  async withImage<T>(
    ref: ImageReference,
    o: { credentials?: RegistryCredentials; log(line: string): void; signal?: AbortSignal },
    use: (image: PulledImage) => Promise<T>,
  ): Promise<T> {
    // refused before any request is made
    await this.admit(ref.registry);
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

  /**
   * Refuses the registry a tenant named when it is, or resolves to, an internal address the
   * operator did not allow. A name that does not resolve passes: its pull fails on its own
   * (or a mirror serves it), and every connection is checked again by the pull's proxy.
   */
  private async admit(registry: string): Promise<void> {
    const { host, port } = registryEndpoint(registry);
    const check = await this.guard.check(host, port).catch((err: unknown) => {
      if (err instanceof ResolveError) return undefined;
      throw err;
    });
    if (check && !check.allowed) throw new PullError(refusedRegistry(registry, describeRefusal(host, check)));
  }

  /**
   * The loopback registries a pull may reach: Go connects to loopback addresses and
   * `localhost` without its proxy, so the pull's namespace relays their ports to the proxy.
   */
  private loopbackForwards(sources: readonly PullSource[]): LoopbackForward[] {
    const forwards: LoopbackForward[] = [];
    for (const s of sources) {
      if (!isLoopbackRegistry(s.registry)) continue;
      const { host, port } = registryEndpoint(s.registry);
      const bracketed = host.includes(":") ? `[${host}]` : host;
      const explicit = /:\d+$/.test(s.registry);
      // without a port a registry is asked on 443, and on 80 when plain HTTP is allowed
      for (const p of explicit ? [port] : s.insecure ? [443, 80] : [443])
        forwards.push({ port: p, target: `${bracketed}:${p}` });
    }
    return forwards;
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
    const nsenter = await requireBinary("nsenter", "apt-get install util-linux");
    // A home of its own: credentials come from the build request only, never from the
    // host's own login files (~/.docker/config.json, auth.json), which no team may borrow.
    const home = await mkdtemp(path.join(os.tmpdir(), "x-pull-"));
    let proxy: PullProxy | undefined;
    let network: PullNetwork | undefined;
    try {
      const authfile = path.join(home, "auth.json");
      const auths: Record<string, { auth: string }> = {};
      if (o.credentials) {
        const auth = Buffer.from(`${o.credentials.username}:${o.credentials.password}`).toString("base64");
        // to the registry they are for, and to no mirror the operator did not trust with them
        for (const s of sources) if (s.credentials) auths[s.registry] = { auth };
      }
      await writeFile(authfile, JSON.stringify({ auths }), { mode: 0o600 });
      proxy = await PullProxy.listen(path.join(home, "proxy.sock"), this.guard);
      network = await PullNetwork.start(proxy.socketPath, this.loopbackForwards(sources));
      const env = {
        PATH: process.env.PATH,
        HOME: home,
        XDG_RUNTIME_DIR: home,
        XDG_CONFIG_HOME: home,
        DOCKER_CONFIG: home,
        ...network.proxyEnv(),
      };
      for (const [i, source] of sources.entries()) {
        o.log(
          `pulling ${source.ref.replace(/^docker:\/\//, "")}${source.mirror ? ` (mirror of ${ref.registry})` : ""}`,
        );
        const args = [
          `--net=${network.netns}`,
          "--",
          skopeo,
          "--command-timeout",
          PULL_TIMEOUT,
          "copy",
          "--authfile",
          authfile,
          ...(source.insecure ? ["--src-tls-verify=false"] : []),
          source.ref,
          `oci:${this.dir}:${name}`,
        ];
        const seen = proxy.outcomes.length;
        try {
          // only skopeo's progress is shown: its other lines may carry what a registry answered
          const progress = (line: string) => {
            if (PROGRESS.test(line)) o.log(line);
          };
          await commandLines(nsenter, args, progress, { env, signal: o.signal });
          return;
        } catch (err) {
          if (o.signal?.aborted) throw new PullError(`the platform shut down while pulling '${image}'`);
          const output = err instanceof CommandError ? err.stderr : String(err);
          this.o.log?.info({ image, registry: source.registry, skopeo: skopeoReason(output) }, "pull failed");
          const message = describePullFailure(
            { image, source, withCredentials: o.credentials !== undefined && source.credentials },
            output,
            proxy.outcomes.slice(seen),
          );
          if (i === sources.length - 1) throw new PullError(message);
          o.log(`mirror ${source.registry} failed (${message}); trying the next source`);
        }
      }
    } finally {
      await network?.close();
      await proxy?.close();
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

  /** A manifest or config blob: the registry decides its size, the host reads 4 MiB of it at most. */
  private async blob(digest: string): Promise<string> {
    const [algorithm, hex] = digest.split(":");
    const file = path.join(this.dir, "blobs", algorithm!, hex!);
    const bytes = await readFileAtMost(file, BLOB_JSON_MAX_BYTES, `the image's blob ${digest}`);
    if (!bytes) throw new PullError(`the pulled image has no blob ${digest}`);
    return bytes.toString("utf8");
  }
}
