import { lstat, mkdir, readFile, readlink } from "node:fs/promises";
import path from "node:path";

/** A local account of a root filesystem, from its /etc/passwd. */
export interface RootfsUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

const MAX_SYMLINKS = 40;

function parseColonFile(text: string): string[][] {
  return text
    .split("\n")
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.split(":"));
}

/**
 * A sandbox root filesystem seen from the host (a mounted overlay of template layers). Paths are
 * resolved the way the sandbox's kernel would resolve them: absolute symlink targets start at
 * the rootfs's root and `..` never climbs above it, so an image's `/bin -> usr/bin` or a
 * malicious `etc -> /etc` can never lead host-side writes out of the rootfs.
 */
export class RootfsView {
  constructor(readonly root: string) {}

  /** Host path of a path inside the rootfs that `resolve` returned. */
  host(inside: string): string {
    return path.join(this.root, inside);
  }

  /** Resolves every symlink in `p` (the last component only when `followLast`) inside the rootfs. */
  async resolve(p: string, followLast = true): Promise<string> {
    const pending = p.split("/").filter(Boolean);
    const done: string[] = [];
    let links = 0;
    while (pending.length > 0) {
      const part = pending.shift()!;
      if (part === ".") continue;
      if (part === "..") {
        done.pop();
        continue;
      }
      const candidate = `/${[...done, part].join("/")}`;
      const info = await lstat(this.host(candidate)).catch(() => undefined);
      if (info?.isSymbolicLink() && (followLast || pending.length > 0)) {
        if (++links > MAX_SYMLINKS) throw new Error(`too many levels of symbolic links in ${p}`);
        const target = await readlink(this.host(candidate));
        if (target.startsWith("/")) done.length = 0;
        pending.unshift(...target.split("/").filter(Boolean));
        continue;
      }
      done.push(part);
    }
    return `/${done.join("/")}`;
  }

  private async readEtc(file: string): Promise<string[][]> {
    const text = await readFile(this.host(await this.resolve(`/etc/${file}`)), "utf8").catch(() => "");
    return parseColonFile(text);
  }

  /** An account by name or numeric uid. */
  async user(nameOrUid: string): Promise<RootfsUser | undefined> {
    const byUid = /^\d+$/.test(nameOrUid);
    for (const f of await this.readEtc("passwd")) {
      if ((byUid ? f[2] : f[0]) !== nameOrUid) continue;
      return { name: f[0]!, uid: Number(f[2]), gid: Number(f[3]), home: f[5] || "/" };
    }
    return undefined;
  }

  async groupId(nameOrGid: string): Promise<number | undefined> {
    if (/^\d+$/.test(nameOrGid)) return Number(nameOrGid);
    const entry = (await this.readEtc("group")).find((f) => f[0] === nameOrGid);
    return entry ? Number(entry[2]) : undefined;
  }

  /**
   * Numeric owner of `user[:group]`. With no group, the group of the user's name when there is
   * one (as `chown user:user` would), else the user's primary group.
   */
  async owner(spec: string): Promise<{ uid: number; gid: number }> {
    const [userPart = "", groupPart] = spec.split(":");
    const user = await this.user(userPart);
    const uid = user?.uid ?? (/^\d+$/.test(userPart) ? Number(userPart) : undefined);
    if (uid === undefined) throw new Error(`user '${userPart}' does not exist in the template's /etc/passwd`);
    if (groupPart) {
      const gid = await this.groupId(groupPart);
      if (gid === undefined)
        throw new Error(`group '${groupPart}' does not exist in the template's /etc/group`);
      return { uid, gid };
    }
    return { uid, gid: (await this.groupId(userPart)) ?? user?.gid ?? uid };
  }

  /** `mkdir -p` inside the rootfs; directories it creates are root's, mode 0755. Returns the resolved path. */
  async mkdirs(dir: string): Promise<string> {
    const resolved = await this.resolve(dir);
    await mkdir(this.host(resolved), { recursive: true, mode: 0o755 });
    return resolved;
  }
}
