import { createRequire } from "node:module";
import path from "node:path";

/** The surface of `native/host_fs.c`. */
export interface HostFsAddon {
  /** openat2(2); O_CLOEXEC is always added. Throws an Error with Node's errno `code`. */
  openat2(dirfd: number, path: string, flags: number, resolve: number, mode: number): number;
  constants: {
    AT_FDCWD: number;
    O_PATH: number;
    O_RDONLY: number;
    O_DIRECTORY: number;
    O_NOFOLLOW: number;
    O_NONBLOCK: number;
    O_NOCTTY: number;
    RESOLVE_NO_XDEV: number;
    RESOLVE_NO_MAGICLINKS: number;
    RESOLVE_NO_SYMLINKS: number;
    RESOLVE_BENEATH: number;
    RESOLVE_IN_ROOT: number;
  };
}

let addon: HostFsAddon | undefined;

/** The platform's native helper, built by the package's install script (node-gyp). */
export function hostFs(): HostFsAddon {
  if (addon) return addon;
  const require = createRequire(import.meta.url);
  const file = path.join(
    path.dirname(require.resolve("@x/platform/package.json")),
    "native/build/Release/host_fs.node",
  );
  try {
    addon = require(file) as HostFsAddon;
  } catch (err) {
    throw new Error(`the platform's native helper ${file} is missing: run \`pnpm install\``, { cause: err });
  }
  return addon;
}

/** The surface of `native/idmap.c`: the mounts of a runc sandbox in a user namespace. */
export interface IdmapAddon {
  /** The fd of a new user namespace mapping uids and gids 0..size-1 to hostId..hostId+size-1. */
  userns(hostId: number, size: number): number;
  /** `source` shown at `target` through the namespace's mapping; nosuid,nodev. */
  idmappedBind(source: string, target: string, usernsFd: number, readonly: boolean): void;
  /**
   * An overlay of idmapped clones of `lowers` (topmost first) over `upper` and `work`
   * (directories of `disk`), created with the namespace root's fsuid, attached at `target`.
   * The clones go to the overlay as file descriptors (Linux 6.8+), else, or with `byPath`,
   * attached under `scratch` for the mount and detached after.
   */
  idmappedOverlay(o: {
    lowers: string[];
    disk: string;
    upper: string;
    work: string;
    target: string;
    scratch: string;
    usernsFd: number;
    hostId: number;
    suid: boolean;
    byPath?: boolean;
  }): void;
  /** A read-only sysfs of the network namespace at `netnsPath`, attached at `target`. */
  sysfsInNetns(netnsPath: string, target: string): void;
  /** Writes `name=value` net sysctls (names dotted under `net.`) of that network namespace. */
  netSysctlsInNetns(netnsPath: string, settings: string[]): void;
  /** true when `target` was a mount point and is no more; busy ones detached with `detach`. */
  unmount(target: string, detach: boolean): boolean;
}

const addons = new Map<string, unknown>();

/** The native helper `native/build/Release/<name>.node`, loaded once. */
function nativeAddon<T>(name: string): T {
  const loaded = addons.get(name);
  if (loaded) return loaded as T;
  const require = createRequire(import.meta.url);
  const file = path.join(
    path.dirname(require.resolve("@x/platform/package.json")),
    `native/build/Release/${name}.node`,
  );
  try {
    const addon = require(file) as T;
    addons.set(name, addon);
    return addon;
  } catch (err) {
    throw new Error(`the platform's native helper ${file} is missing: run \`pnpm install\``, { cause: err });
  }
}

export function idmap(): IdmapAddon {
  return nativeAddon<IdmapAddon>("idmap");
}

/** The surface of `native/host_net.c`. */
export interface HostNetAddon {
  /** A new IPv4 TCP socket's fd (non-blocking, close-on-exec, unconnected) whose packets carry `mark` (SO_MARK). */
  markedTcpSocket(mark: number): number;
}

export function hostNet(): HostNetAddon {
  return nativeAddon<HostNetAddon>("host_net");
}
