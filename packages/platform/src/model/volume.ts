import path from "node:path";

/** A team's persistent volume: its own filesystem, mounted into sandboxes by name. */
export interface Volume {
  /** A UUID, as E2B's. */
  id: string;
  teamId: string;
  /** Unique within the team: letters, digits, `_` and `-`. */
  name: string;
  /** Capacity: writes past it fail with ENOSPC in the sandbox and 507 on the content API. */
  sizeMB: number;
  /** Bearer token of the content API; it does not expire and goes with the volume. */
  token: string;
  createdAt: string;
  /** The node whose disk holds it (`local` under `x serve`). */
  nodeId?: string;
}

/** A volume mounted into a sandbox: by name on the wire, by id underneath. */
export interface VolumeMount {
  volumeId: string;
  name: string;
  /** Absolute, normal path inside the sandbox. */
  path: string;
}

/** Who files written through the content API belong to when the call does not say: the sandbox's `user`. */
export const VOLUME_DEFAULT_OWNER = { uid: 1000, gid: 1000 } as const;

const VOLUME_NAME = /^[a-zA-Z0-9_-]+$/;

export function isValidVolumeName(name: string): boolean {
  return VOLUME_NAME.test(name) && name.length <= 128;
}

/** Paths a volume may not be mounted at: the system's own, or the platform's. */
const RESERVED_MOUNT_PATHS = [
  "/",
  "/proc",
  "/sys",
  "/dev",
  "/etc",
  "/bin",
  "/sbin",
  "/usr",
  "/lib",
  "/lib64",
  "/opt/x",
];

/** Why a mount path cannot be used, or undefined when it can. */
export function mountPathProblem(p: string): string | undefined {
  if (!p) return "path must not be empty";
  if (!p.startsWith("/")) return "path must be absolute";
  if (path.posix.normalize(p) !== p || (p.length > 1 && p.endsWith("/"))) {
    return "path must be normal (no '.', '..', '//' or trailing '/')";
  }
  const reserved = RESERVED_MOUNT_PATHS.find((r) => p === r || (r !== "/" && p.startsWith(`${r}/`)));
  if (reserved) return `path must not be ${reserved === p ? p : `under ${reserved}`}`;
  return undefined;
}
