import type { Stats } from "node:fs";
import { TenantFileError, TenantTree } from "../lib/tenant-tree.js";

/** A local account of a root filesystem, from its /etc/passwd. */
export interface RootfsUser {
  name: string;
  uid: number;
  gid: number;
  home: string;
}

/** The largest /etc/passwd or /etc/group read from a template (Debian's are a few KB). */
const MAX_ACCOUNTS_FILE = 4 * 2 ** 20;

function parseColonFile(text: string): string[][] {
  return text
    .split("\n")
    .filter((line) => line && !line.startsWith("#"))
    .map((line) => line.split(":"));
}

/**
 * A sandbox root filesystem seen from the host (a mounted overlay of template layers, or one
 * layer). Paths are resolved the way the sandbox's kernel would resolve them, by the kernel
 * (TenantTree, "inside"): absolute symlink targets start at the rootfs's root and `..` never
 * climbs above it, so an image's `/bin -> usr/bin` works and a malicious `etc -> /etc` can
 * never lead host-side reads or writes out of the rootfs.
 */
export class RootfsView {
  constructor(readonly root: string) {}

  /** Runs `fn` on the rootfs as a TenantTree (several lookups on one open root). */
  with<T>(fn: (tree: TenantTree) => Promise<T> | T): Promise<T> {
    return TenantTree.with(this.root, fn);
  }

  /** What `p` is, links followed inside the rootfs; undefined when it does not exist. */
  stat(p: string): Promise<Stats | undefined> {
    return this.with((tree) => tree.stat(p));
  }

  /**
   * Runs `fn` with a host path for the directory `dir` of the rootfs, made like `mkdir -p`
   * (root's, 0755) where missing when `create`.
   */
  withDir<T>(dir: string, create: boolean, fn: (dirPath: string) => Promise<T> | T): Promise<T> {
    return this.with((tree) => tree.withDir(dir, create ? { create: 0o755 } : {}, fn));
  }

  private async readEtc(file: string): Promise<string[][]> {
    const content = await this.with((tree) =>
      tree.readFile(`/etc/${file}`, { maxBytes: MAX_ACCOUNTS_FILE }).catch((err: unknown) => {
        if (err instanceof TenantFileError) throw new TenantFileError(`the template's ${err.message}`);
        throw err;
      }),
    );
    return parseColonFile(content?.toString("utf8") ?? "");
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
}
