import * as fs from "node:fs";
import type * as fsp from "node:fs/promises";

/**
 * File-system calls on one path's metadata, made synchronously but with `node:fs/promises`'
 * signatures, so callers stay as they are. Each is one system call that returns in
 * microseconds on the sandbox's own disk, where a call through libuv's thread pool pays two
 * thread hand-offs: under gVisor ~0.4-1 ms each (0.035 ms synchronously), and an RPC that
 * checks a path's ancestors makes several. Calls whose cost grows with the data (reading a
 * directory, removing a tree, reading and writing contents) stay on the thread pool, which
 * main.ts starts at boot.
 */
function atOnce<A extends unknown[], R>(call: (...args: A) => R): (...args: A) => Promise<R> {
  return (...args) => {
    try {
      return Promise.resolve(call(...args));
    } catch (err) {
      return Promise.reject(err);
    }
  };
}

export const access = atOnce(fs.accessSync) as typeof fsp.access;
export const chown = atOnce(fs.chownSync) as typeof fsp.chown;
export const lstat = atOnce(fs.lstatSync) as unknown as typeof fsp.lstat;
export const mkdir = atOnce(fs.mkdirSync) as typeof fsp.mkdir;
export const readlink = atOnce(fs.readlinkSync) as unknown as typeof fsp.readlink;
/** libc's realpath(3), as the promise API's is (`fs.realpathSync` alone walks each component in JavaScript). */
export const realpath = atOnce(fs.realpathSync.native) as unknown as typeof fsp.realpath;
export const rename = atOnce(fs.renameSync) as typeof fsp.rename;
export const stat = atOnce(fs.statSync) as unknown as typeof fsp.stat;
export const unlink = atOnce(fs.unlinkSync) as typeof fsp.unlink;
