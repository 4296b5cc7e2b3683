import type { BigIntStats, Stats } from "node:fs";
import path from "node:path";
import { Code, ConnectError } from "@connectrpc/connect";
import { realpath, stat } from "../sync-fs.js";
import { listedGroupIds, type User } from "../users.js";

/**
 * envd runs as root and acts for the requesting user, so it checks that user's rights itself
 * (classic owner/group/other bits, supplementary groups from /etc/group) before touching
 * anything, and hands what it creates over to that user.
 */
export interface Principal {
  name: string;
  uid: number;
  gid: number;
  groups: ReadonlySet<number>;
}

export const R = 4;
export const W = 2;
export const X = 1;

const S_ISVTX = 0o1000;

export async function principalOf(user: User): Promise<Principal> {
  const groups = new Set([user.gid]);
  if (user.uid !== 0) for (const gid of listedGroupIds(user)) groups.add(gid);
  return { name: user.name, uid: user.uid, gid: user.gid, groups };
}

/** Whether `who` holds all of `want` (R|W|X) on an inode with these stats. Root holds everything. */
export function allowed(
  who: Principal,
  st: { mode: number | bigint; uid: number | bigint; gid: number | bigint },
  want: number,
): boolean {
  if (who.uid === 0) return true;
  const mode = Number(st.mode);
  const bits =
    Number(st.uid) === who.uid
      ? (mode >> 6) & 7
      : who.groups.has(Number(st.gid))
        ? (mode >> 3) & 7
        : mode & 7;
  return (bits & want) === want;
}

export function permissionDenied(action: string, target: string, who: Principal): ConnectError {
  return new ConnectError(
    `${action} ${target}: permission denied for user '${who.name}'`,
    Code.PermissionDenied,
  );
}

/** Requires search (x) on `dir` and every directory above it, as path lookup does. */
export async function checkTraverse(
  who: Principal,
  dir: string,
  action: string,
  target: string,
): Promise<void> {
  if (who.uid === 0) return;
  const real = await realpath(dir);
  for (let current = real; ; current = path.dirname(current)) {
    if (!allowed(who, await stat(current), X)) throw permissionDenied(action, target, who);
    if (current === "/") return;
  }
}

/** Requires `want` on directory `dir` itself plus search on its ancestors. */
export async function checkDir(
  who: Principal,
  dir: string,
  want: number,
  action: string,
  target: string,
): Promise<void> {
  if (who.uid === 0) return;
  await checkTraverse(who, dir, action, target);
  if (!allowed(who, await stat(dir), want)) throw permissionDenied(action, target, who);
}

/** Whether `who` may unlink or rename an entry out of `parent`: write+search, and the sticky-bit rule. */
export function mayUnlink(who: Principal, parent: Stats | BigIntStats, entry: Stats | BigIntStats): boolean {
  if (who.uid === 0) return true;
  if (!allowed(who, parent, W | X)) return false;
  if (Number(parent.mode) & S_ISVTX) return Number(parent.uid) === who.uid || Number(entry.uid) === who.uid;
  return true;
}
