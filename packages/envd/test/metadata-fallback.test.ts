/**
 * Metadata where the filesystem has no user xattrs (gVisor's gofer mounts: listxattr answers
 * an empty list, setxattr ENOTSUP): envd keeps it per inode instead.
 */
import { renameSync, writeFileSync } from "node:fs";
import path from "node:path";
import { tempDir } from "./helpers/envd-process.js";

jest.mock("../src/native/xattr.js", () => ({
  listXattrs: () => [],
  getXattr: () => undefined,
  removeXattr: () => undefined,
  setXattr: (file: string, name: string) => {
    throw Object.assign(new Error(`ENOTSUP: Operation not supported, lsetxattr '${file}' ${name}`), {
      code: "ENOTSUP",
    });
  },
}));

import { readMetadata, writeMetadata } from "../src/filesystem/metadata.js";

describe("metadata without xattrs", () => {
  const dir = tempDir("envd-meta-");

  test("is kept per inode: it follows a rename and is dropped by a new file or a clear", async () => {
    const a = path.join(dir, "a.txt");
    writeFileSync(a, "content");
    await writeMetadata(a, { author: "mish" });
    expect(await readMetadata(a)).toEqual({ author: "mish" });

    const b = path.join(dir, "b.txt");
    renameSync(a, b);
    expect(await readMetadata(b)).toEqual({ author: "mish" });

    // an overwrite through a staging file is a new inode
    const staging = path.join(dir, ".b.staging");
    writeFileSync(staging, "content");
    renameSync(staging, b);
    expect(await readMetadata(b)).toEqual({});

    await writeMetadata(b, { x: "1" });
    await writeMetadata(b, {});
    expect(await readMetadata(b)).toEqual({});
  });

  test("a file whose size changed since is not shown the old metadata", async () => {
    const c = path.join(dir, "c.txt");
    writeFileSync(c, "short");
    await writeMetadata(c, { tag: "t" });
    writeFileSync(c, "much longer content");
    expect(await readMetadata(c)).toEqual({});
  });
});
