import { type DestinationRule, destinationRules } from "../../network/destination-guard.js";
import { formatReference, type ImageReference, isLoopbackRegistry } from "./reference.js";

/**
 * An operator's registry settings (`x serve --registry-mirror`, `--insecure-registry`,
 * `--allow-private-registry`, `--send-credentials-to-mirror`).
 */
export interface RegistrySettings {
  /** Mirrors tried in order before the registry itself, by registry (`docker.io`). */
  mirrors: ReadonlyMap<string, readonly string[]>;
  /** Registries spoken to over plain HTTP or unverified TLS. */
  insecure: ReadonlySet<string>;
  /**
   * Internal hosts (loopback, private, …) pulls may connect to: those of
   * `--allow-private-registry`, and every registry and mirror the other settings name, which
   * the operator chose too. Every other internal address is refused.
   */
  allowed: readonly DestinationRule[];
  /** Mirrors (`host[:port]`) a team's registry credentials are sent to as well as to the registry they are for. */
  credentialMirrors: ReadonlySet<string>;
}

/** One place to pull an image from: the registry itself or one of its mirrors. */
export interface PullSource {
  /** `docker://` reference for skopeo. */
  ref: string;
  /** `host[:port]` the credentials are sent to. */
  registry: string;
  mirror: boolean;
  /** Plain HTTP (or unverified TLS) allowed: loopback (which a pull reaches only when allowed), or listed as insecure. */
  insecure: boolean;
  /** The team's credentials go here: the registry they were given for, or a mirror the operator trusts with them. */
  credentials: boolean;
}

/** Host and port of `host[:port]` (443 when none: where a registry is asked first). */
export function registryEndpoint(registry: string): { host: string; port: number } {
  const m = /^(?:\[([^\]]+)\]|([^:]+))(?::(\d+))?$/.exec(registry);
  return { host: m?.[1] ?? m?.[2] ?? registry, port: m?.[3] ? Number(m[3]) : 443 };
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
 * registry are tried in the order given), insecure registries and mirrors trusted with
 * credentials as `host[:port]`, internal registries allowed as `HOST[:PORT]` or a CIDR.
 */
export function registrySettings(o: {
  mirrors?: readonly string[];
  insecure?: readonly string[];
  allowPrivate?: readonly string[];
  credentialMirrors?: readonly string[];
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
  const credentialMirrors = new Set<string>();
  for (const raw of o.credentialMirrors ?? []) {
    const { location: at } = location(raw, "mirror trusted with credentials");
    const host = at.split("/")[0]!;
    if (![...mirrors.values()].some((list) => list.some((m) => m.split("/")[0] === host)))
      throw new Error(`--send-credentials-to-mirror '${raw}' is not a mirror of --registry-mirror`);
    credentialMirrors.add(host);
  }
  const chosen = [
    ...insecure,
    ...mirrors.keys(),
    ...[...mirrors.values()].flat().map((m) => m.split("/")[0]!),
  ];
  const allowed = [
    ...destinationRules(o.allowPrivate ?? [], "--allow-private-registry"),
    ...destinationRules(chosen, "registry"),
  ];
  return { mirrors, insecure, allowed, credentialMirrors };
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
      credentials: !mirror || settings.credentialMirrors.has(registry),
    };
  };
  const mirrors = settings.mirrors.get(ref.registry) ?? [];
  return [...mirrors.map((m) => source(m, true)), source(ref.registry, false)];
}
