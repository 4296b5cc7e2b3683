// Extended attributes of a path, without following a final symlink (the l*xattr calls).
// Synchronous: they touch only inode metadata and return in microseconds.
import { nativeAddon } from "./addon.js";

/** The attribute's value, or undefined when it is not set. */
export function getXattr(path: string, name: string): Buffer | undefined {
  return nativeAddon().getxattr(path, name);
}

export function setXattr(path: string, name: string, value: Buffer | string): void {
  nativeAddon().setxattr(path, name, typeof value === "string" ? Buffer.from(value) : value);
}

export function listXattrs(path: string): string[] {
  return nativeAddon().listxattr(path);
}

/** Removes the attribute; a missing attribute is not an error. */
export function removeXattr(path: string, name: string): void {
  nativeAddon().removexattr(path, name);
}
