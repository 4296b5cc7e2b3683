// The lstat and xattr names of a directory's entries in one call into the addon (listings).
import { nativeAddon } from "./addon.js";

/** Numbers per entry in statEntries' result, in this order (native/envd_native.c). */
const FIELDS = 7;

/** What llistxattr said of an entry. */
export const XATTRS = {
  /** None of envd's (`user.e2b.*`). */
  none: 0,
  /** At least one of envd's: read them. */
  ours: 1,
  /** The filesystem has no user xattrs (ENOTSUP): envd may keep the metadata itself. */
  unsupportedFs: 2,
  /** Refused otherwise (EPERM, …). */
  error: 3,
} as const;
export type XattrState = (typeof XATTRS)[keyof typeof XATTRS];

/** One entry's lstat (a final symlink not followed) and xattr state; undefined once gone. */
export interface EntryStat {
  mode: number;
  uid: number;
  gid: number;
  size: number;
  mtimeSec: number;
  mtimeNsec: number;
  xattrs: XattrState;
}

/** The entries `names` of `dir`, in the same order; `undefined` for one gone meanwhile. */
export function statEntries(dir: string, names: readonly string[]): (EntryStat | undefined)[] {
  const raw = nativeAddon().statEntries(dir, names);
  const out: (EntryStat | undefined)[] = new Array(names.length);
  for (let i = 0, o = 0; i < names.length; i++, o += FIELDS) {
    const mode = raw[o]!;
    out[i] =
      mode === 0
        ? undefined
        : {
            mode,
            uid: raw[o + 1]!,
            gid: raw[o + 2]!,
            size: raw[o + 3]!,
            mtimeSec: raw[o + 4]!,
            mtimeNsec: raw[o + 5]!,
            xattrs: raw[o + 6]! as XattrState,
          };
  }
  return out;
}
