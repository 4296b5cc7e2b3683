import { formatReference, type ImageReference, isLoopbackRegistry } from "./reference.js";

/** An operator's registry settings (`x serve --registry-mirror`, `--insecure-registry`). */
export interface RegistrySettings {
  /** Mirrors tried in order before the registry itself, by registry (`docker.io`). */
  mirrors: ReadonlyMap<string, readonly string[]>;
  /** Registries spoken to over plain HTTP or unverified TLS. */
  insecure: ReadonlySet<string>;
}

/** One place to pull an image from: the registry itself or one of its mirrors. */
export interface PullSource {
  /** `docker://` reference for skopeo. */
  ref: string;
  /** `host[:port]` the credentials are sent to. */
  registry: string;
  mirror: boolean;
  /** Plain HTTP (or unverified TLS) allowed: loopback, or listed as insecure. */
  insecure: boolean;
}

const LOCATION = /^(?:[a-zA-Z0-9.-]+|\[[0-9a-fA-F:.]+\])(?::\d{1,5})?(?:\/[a-z0-9._/-]+)?$/;

/** `host[:port][/path]`, with `http://` meaning insecure and `https://` dropped. */
function location(raw: string, what: string): { location: string; plainHttp: boolean } {
  const m = /^(https?):\/\/(.*)$/.exec(raw.trim());
  const loc = (m ? m[2]! : raw.trim()).replace(/\/+$/, "");
  if (!LOCATION.test(loc)) throw new Error(`${what} '${raw}' is not host[:port][/path]`);
  return { location: loc, plainHttp: m?.[1] === "http" };
}

/**
 * Checks and normalises the operator's settings: mirrors as `REGISTRY=MIRROR` (several for one
 * registry are tried in the order given), insecure registries as `host[:port]`.
 */
export function registrySettings(o: {
  mirrors?: readonly string[];
  insecure?: readonly string[];
}): RegistrySettings {
  const insecure = new Set<string>();
  for (const raw of o.insecure ?? []) insecure.add(location(raw, "insecure registry").location);
  const mirrors = new Map<string, string[]>();
  for (const raw of o.mirrors ?? []) {
    const eq = raw.indexOf("=");
    if (eq <= 0)
      throw new Error(`registry mirror '${raw}' is not REGISTRY=MIRROR (e.g. docker.io=127.0.0.1:5000)`);
    const registry = location(raw.slice(0, eq), "registry").location.replace(
      /^index\.docker\.io$/,
      "docker.io",
    );
    const mirror = location(raw.slice(eq + 1), "registry mirror");
    if (mirror.plainHttp) insecure.add(mirror.location.split("/")[0]!);
    mirrors.set(registry, [...(mirrors.get(registry) ?? []), mirror.location]);
  }
  return { mirrors, insecure };
}

/** Where to pull `ref` from, in order: its registry's mirrors, then the registry. */
export function pullSources(ref: ImageReference, settings: RegistrySettings): PullSource[] {
  const source = (at: string, mirror: boolean): PullSource => {
    const registry = at.split("/")[0]!;
    return {
      ref: `docker://${formatReference(ref, at)}`,
      registry,
      mirror,
      insecure: isLoopbackRegistry(registry) || settings.insecure.has(registry),
    };
  };
  const mirrors = settings.mirrors.get(ref.registry) ?? [];
  return [...mirrors.map((m) => source(m, true)), source(ref.registry, false)];
}
