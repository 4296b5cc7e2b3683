/** An image in a registry, fully qualified as Docker normalises it (`python` → `docker.io/library/python:latest`). */
export interface ImageReference {
  /** `host[:port]`, e.g. `docker.io`, `ghcr.io`, `127.0.0.1:5000`. */
  registry: string;
  /** Path inside the registry, e.g. `library/python`. */
  repository: string;
  /** Unset when pinned by digest only. */
  tag?: string;
  /** `sha256:<hex>`; wins over the tag, as Docker pulls by digest when both are given. */
  digest?: string;
}

export const DOCKER_HUB = "docker.io";

// Docker's reference grammar (distribution/reference), in pieces.
const HOST =
  /^(?:[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?)*|\[[0-9a-fA-F:.]+\])(?::\d{1,5})?$/;
const PATH_COMPONENT = /^[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*$/;
const TAG = /^\w[\w.-]{0,127}$/;
const DIGEST = /^[a-z0-9]+(?:[.+_-][a-z0-9]+)*:[a-fA-F0-9]{32,}$/;

/**
 * Parses what `fromImage` or a Dockerfile's FROM names: `python:3.12`, `user/app`,
 * `host:port/ns/img:tag`, `img@sha256:…` (an optional `docker://` in front). The first
 * component is the registry when it looks like a host (a dot, a port or `localhost`), as Docker
 * decides. Returns undefined for anything that is not a reference.
 */
export function parseImageReference(raw: string): ImageReference | undefined {
  let rest = raw.trim().replace(/^docker:\/\//, "");
  let digest: string | undefined;
  const at = rest.indexOf("@");
  if (at >= 0) {
    digest = rest.slice(at + 1);
    rest = rest.slice(0, at);
    if (!DIGEST.test(digest)) return undefined;
  }
  let tag: string | undefined;
  const colon = rest.lastIndexOf(":");
  if (colon > rest.lastIndexOf("/")) {
    tag = rest.slice(colon + 1);
    rest = rest.slice(0, colon);
    if (!TAG.test(tag)) return undefined;
  }
  const parts = rest.split("/");
  let registry = DOCKER_HUB;
  const first = parts[0]!;
  if (parts.length > 1 && (first.includes(".") || first.includes(":") || first === "localhost")) {
    if (!HOST.test(first)) return undefined;
    registry = first === "index.docker.io" ? DOCKER_HUB : first;
    parts.shift();
  }
  if (registry === DOCKER_HUB && parts.length === 1) parts.unshift("library");
  if (parts.some((p) => !PATH_COMPONENT.test(p))) return undefined;
  const repository = parts.join("/");
  if (repository.length > 255) return undefined;
  return { registry, repository, ...(digest ? { digest } : { tag: tag ?? "latest" }) };
}

/** `registry/repository:tag` or `registry/repository@digest`; `registry` replaces the host (a mirror's). */
export function formatReference(ref: ImageReference, registry = ref.registry): string {
  return `${registry}/${ref.repository}${ref.digest ? `@${ref.digest}` : `:${ref.tag}`}`;
}

/** The host part of `host[:port]` (brackets of an IPv6 address removed). */
function hostOf(registry: string): string {
  const m = /^\[([^\]]+)\]/.exec(registry);
  if (m) return m[1]!;
  return registry.replace(/:\d+$/, "");
}

/**
 * A registry on this machine (127.0.0.0/8, ::1, localhost): Docker speaks plain HTTP to these
 * unasked, and so do pulls here, which reach one only when the operator allowed it.
 */
export function isLoopbackRegistry(registry: string): boolean {
  const host = hostOf(registry).toLowerCase();
  return host === "localhost" || host === "::1" || /^127(?:\.\d{1,3}){3}$/.test(host);
}
