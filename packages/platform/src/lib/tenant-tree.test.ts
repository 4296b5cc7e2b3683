import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { TenantFileError, TenantTree } from "./tenant-tree.js";

/** A tree a tenant shaped, beside a host directory holding a secret it must never reach. */
let base: string;
let root: string;
let secret: string;

beforeEach(() => {
  base = mkdtempSync(path.join(os.tmpdir(), "tenant-tree-"));
  root = path.join(base, "root");
  secret = path.join(base, "host-secret");
  writeFileSync(secret, "host only\n");
  mkdirSync(path.join(root, "etc"), { recursive: true });
  mkdirSync(path.join(root, "usr", "lib"), { recursive: true });
  writeFileSync(path.join(root, "etc", "passwd"), "root:x:0:0:root:/root:/bin/bash\n");
  symlinkSync("usr/lib", path.join(root, "lib"));
  symlinkSync("/", path.join(root, "s"));
  symlinkSync(secret, path.join(root, "abs-link"));
  symlinkSync("../host-secret", path.join(root, "up-link"));
  execFileSync("mkfifo", [path.join(root, "etc", "fifo")]);
});

afterEach(() => rmSync(base, { recursive: true, force: true }));

async function read(p: string, links: "refuse" | "inside" = "inside", maxBytes?: number) {
  return TenantTree.with(root, async (tree) => (await tree.readFile(p, { links, maxBytes }))?.toString());
}

test("reads a regular file of the tree", async () => {
  expect(await read("/etc/passwd")).toContain("root:x:0:0");
  expect(await read("etc/missing")).toBeUndefined();
});

test("`..` never climbs out of the tree", async () => {
  await expect(read("../host-secret", "refuse")).rejects.toThrow(TenantFileError);
  // as the sandbox's kernel sees it, `..` at the root is the root
  expect(await read("../host-secret", "inside")).toBeUndefined();
});

test("links resolve inside the tree, or not at all", async () => {
  // absolute and relative targets that point at the host's file land inside the tree instead
  expect(await read("abs-link")).toBeUndefined();
  expect(await read("up-link")).toBeUndefined();
  expect(await read("s/etc/passwd")).toContain("root:x:0:0");
  await expect(read("s/etc/passwd", "refuse")).rejects.toThrow(/symbolic link/);
  await expect(read("abs-link", "refuse")).rejects.toThrow(/symbolic link/);
});

test("a FIFO is refused at once, never opened", async () => {
  await expect(read("etc/fifo")).rejects.toThrow(/is a FIFO/);
});

test("a file larger than allowed is refused, not cut", async () => {
  await expect(read("etc/passwd", "inside", 8)).rejects.toThrow(/larger than 8 bytes/);
});

test("lstat does not follow the last link; stat follows it inside the tree", () => {
  const tree = TenantTree.open(root);
  try {
    expect(tree.lstat("lib")?.isSymbolicLink()).toBe(true);
    expect(tree.stat("lib")?.isDirectory()).toBe(true);
    expect(tree.stat("abs-link")).toBeUndefined();
    expect(tree.lstat("etc/passwd/x")).toBeUndefined();
  } finally {
    tree.close();
  }
});

test("withDir creates directories like mkdir -p inside the tree, through its own links", async () => {
  await TenantTree.with(root, (tree) =>
    tree.withDir("/lib/x/y", { create: 0o755 }, (dir) => writeFileSync(path.join(dir, "f"), "made")),
  );
  expect(readFileSync(path.join(root, "usr", "lib", "x", "y", "f"), "utf8")).toBe("made");
  // `s -> /` is the tree's own root: a directory made through it lands in the tree
  await TenantTree.with(root, (tree) => tree.withDir("/s/made", { create: 0o755 }, () => undefined));
  expect(statSync(path.join(root, "made")).isDirectory()).toBe(true);
  // a dangling link is not a directory to create through
  symlinkSync("/nowhere", path.join(root, "dangling"));
  await expect(
    TenantTree.with(root, (tree) => tree.withDir("/dangling/x", { create: 0o755 }, () => undefined)),
  ).rejects.toThrow(/exists and is not a directory/);
  await expect(
    TenantTree.with(root, (tree) => tree.withDir("/etc/passwd", { create: 0o755 }, () => undefined)),
  ).rejects.toThrow(/not a directory/);
});

const asRoot = process.getuid?.() === 0 ? test : test.skip;

asRoot("a device node is refused, never opened", async () => {
  execFileSync("mknod", [path.join(root, "etc", "zero"), "c", "1", "5"]);
  await expect(read("etc/zero")).rejects.toThrow(/is a device/);
});
