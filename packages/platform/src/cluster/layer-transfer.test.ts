import { execFileSync } from "node:child_process";
import {
  chown,
  link,
  lstat,
  mkdir,
  mkdtemp,
  readdir,
  readFile,
  readlink,
  rm,
  symlink,
  writeFile,
} from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import path from "node:path";
import { silentLogger } from "../lib/log.js";
import { openStore, type Store } from "../store/index.js";
import { canonicalTar, LayerSync, layerDigest } from "./layer-transfer.js";

// Layers hold what only root can make (whiteout devices, trusted.* xattrs, other owners).
const SECRET = "s3cret";
let root: string;
let dataA: string;
let dataB: string;
let storeA: Store;
let storeB: Store;
const servers: Server[] = [];
let urlA: string;
/** Node "0cut" (listed before a) answers with half of a layer, then hangs up. */
let urlCut: string;
const cutRequests: string[] = [];
let syncA: LayerSync;
let syncB: LayerSync;
/** URLs node a was asked for. */
const requests: string[] = [];

/** Sets xattrs (Node has no API for them): `[file, name, value]` each. */
function setXattrs(attrs: [string, string, Buffer | string][]): void {
  const script =
    "import os,sys\nfor f, k, v in zip(*[iter(sys.argv[1:])] * 3):" +
    " os.setxattr(f, k, bytes.fromhex(v), follow_symlinks=False)";
  const args = attrs.flatMap(([file, name, value]) => [file, name, Buffer.from(value).toString("hex")]);
  execFileSync("python3", ["-c", script, ...args]);
}

/** Every xattr of every path, as hex, by path. */
function xattrs(files: string[]): Record<string, Record<string, string>> {
  const script =
    "import os,sys,json; print(json.dumps({p: {k: os.getxattr(p, k, follow_symlinks=False).hex()" +
    " for k in os.listxattr(p, follow_symlinks=False)} for p in sys.argv[1:]}))";
  return JSON.parse(execFileSync("python3", ["-c", script, ...files], { encoding: "utf8" }));
}

/** A layer with what overlay lower dirs hold: a whiteout, an opaque dir, a symlink, a hardlink, another owner, a file capability. */
async function makeLayer(dir: string): Promise<void> {
  await mkdir(path.join(dir, "etc/opaque"), { recursive: true });
  await writeFile(path.join(dir, "etc/file"), "hello\n", { mode: 0o640 });
  await chown(path.join(dir, "etc/file"), 1234, 1234);
  await link(path.join(dir, "etc/file"), path.join(dir, "etc/hardlink"));
  await symlink("file", path.join(dir, "etc/symlink"));
  execFileSync("mknod", [path.join(dir, "etc/gone"), "c", "0", "0"]);
  await writeFile(path.join(dir, "ping"), "binary", { mode: 0o755 });
  // VFS_CAP_REVISION_2 with the effective bit, permitted cap_net_raw (13)
  const cap = Buffer.alloc(20);
  cap.writeUInt32LE(0x02000001, 0);
  cap.writeUInt32LE(1 << 13, 4);
  setXattrs([
    [path.join(dir, "etc/opaque"), "trusted.overlay.opaque", "y"],
    [path.join(dir, "etc/file"), "user.note", "kept"],
    [path.join(dir, "ping"), "security.capability", cap],
  ]);
}

/** Everything about a tree that a copy must keep, by relative path. */
async function snapshotTree(dir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const files: string[] = [];
  const walk = async (rel: string) => {
    const abs = path.join(dir, rel);
    files.push(abs);
    const s = await lstat(abs);
    out[rel] = {
      mode: s.mode,
      uid: s.uid,
      gid: s.gid,
      rdev: s.rdev,
      nlink: s.nlink,
      mtimeNs: s.isSymbolicLink() ? undefined : (await lstat(abs, { bigint: true })).mtimeNs,
      content: s.isFile() ? await readFile(abs, "utf8") : undefined,
      target: s.isSymbolicLink() ? await readlink(abs) : undefined,
    };
    if (s.isDirectory()) for (const name of (await readdir(abs)).sort()) await walk(path.join(rel, name));
  };
  await walk(".");
  const attrs = xattrs(files);
  for (const abs of files)
    (out[path.relative(dir, abs) || "."] as Record<string, unknown>).xattrs = attrs[abs];
  return out;
}

async function listen(handler: Parameters<typeof createServer>[1]): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const exists = (p: string) =>
  lstat(p).then(
    () => true,
    () => false,
  );

/** Staging directories left anywhere under a data dir. */
async function leftovers(dir: string): Promise<string[]> {
  const names = await readdir(dir, { recursive: true }).catch(() => [] as string[]);
  return names.filter((n) => path.basename(n).startsWith(".fetch-"));
}

beforeAll(async () => {
  root = await mkdtemp(path.join(tmpdir(), "layer-transfer-"));
  dataA = path.join(root, "a");
  dataB = path.join(root, "b");
  await mkdir(path.join(dataA, "layers"), { recursive: true });
  await mkdir(dataB);
  const databaseUrl = `sqlite:${path.join(root, "catalog.db")}`;
  storeA = await openStore({ dataDir: dataA, databaseUrl, nodeId: "a" });
  storeB = await openStore({ dataDir: dataB, databaseUrl, nodeId: "b" });
  const nodeUrl = async (id: string) => ({ a: urlA, "0cut": urlCut })[id];
  syncA = new LayerSync({
    store: storeA,
    dataDir: dataA,
    nodeId: "a",
    secret: SECRET,
    log: silentLogger,
    nodeUrl,
  });
  syncB = new LayerSync({
    store: storeB,
    dataDir: dataB,
    nodeId: "b",
    secret: SECRET,
    log: silentLogger,
    nodeUrl,
  });
  const handle = syncA.handler();
  urlA = await listen((req, res) => {
    requests.push(req.url ?? "");
    if (!handle(req, res)) res.writeHead(404).end("not mine");
  });
  urlCut = await listen(async (req, res) => {
    cutRequests.push(req.url ?? "");
    const rel = new URL(req.url ?? "/", "http://c").searchParams.get("path") ?? "";
    const chunks: Buffer[] = [];
    for await (const chunk of canonicalTar(path.join(dataA, rel))) chunks.push(chunk as Buffer);
    const whole = Buffer.concat(chunks);
    res.writeHead(200, { "Content-Type": "application/x-tar", "Content-Length": String(whole.length) });
    res.write(whole.subarray(0, whole.length / 2), () => res.destroy());
  });
});

afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
  await storeA?.close();
  await storeB?.close();
  if (root) await rm(root, { recursive: true, force: true });
});

describe("layerDigest", () => {
  it("gives the same digest for the same tree and another when a file changes", async () => {
    const dir = path.join(dataA, "layers/digest");
    await makeLayer(dir);
    const first = await layerDigest(dir);
    expect(first.digest).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(first.bytes).toBeGreaterThan(0);
    expect(await layerDigest(dir)).toEqual(first);
    await writeFile(path.join(dir, "etc/file"), "hellO\n");
    expect((await layerDigest(dir)).digest).not.toBe(first.digest);
  });

  it("stops tar when the reader stops early", async () => {
    const dir = path.join(root, "big");
    await mkdir(dir);
    await writeFile(path.join(dir, "blob"), Buffer.alloc(8 << 20, 1));
    // tar's children of this process, by their command line
    const tars = () =>
      execFileSync("ps", ["-o", "args=", "--ppid", String(process.pid)], { encoding: "utf8" })
        .split("\n")
        .filter((line) => line.startsWith("tar "));
    const stream = canonicalTar(dir);
    await new Promise((resolve) => stream.once("data", resolve));
    expect(tars()).toHaveLength(1);
    stream.destroy();
    for (let i = 0; i < 50 && tars().length > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(tars()).toEqual([]);
  });

  it("fails for a directory that is not there", async () => {
    await expect(layerDigest(path.join(root, "nowhere"))).rejects.toThrow(/tar/);
  });
});

describe("LayerSync", () => {
  it("publishes the layers this node has, with their digest", async () => {
    await makeLayer(path.join(dataA, "layers/l1"));
    await syncA.publish(["layers/l1", "layers/absent"]);
    expect(await storeA.layers.get("layers/l1")).toEqual({
      path: "layers/l1",
      ...(await layerDigest(path.join(dataA, "layers/l1"))),
    });
    expect(await storeA.layers.holders("layers/l1")).toEqual(["a"]);
    expect(await storeA.layers.get("layers/absent")).toBeUndefined();
  });

  it("fetches a layer from its holder and it arrives identical", async () => {
    await syncB.ensure(["layers/l1"]);
    const source = await snapshotTree(path.join(dataA, "layers/l1"));
    expect(source).toMatchObject({
      "etc/opaque": { xattrs: { "trusted.overlay.opaque": Buffer.from("y").toString("hex") } },
      "etc/file": { uid: 1234, gid: 1234, nlink: 2, xattrs: { "user.note": expect.any(String) } },
      "etc/symlink": { target: "file" },
      ping: { xattrs: { "security.capability": expect.any(String) } },
    });
    expect(await snapshotTree(path.join(dataB, "layers/l1"))).toEqual(source);
    const gone = await lstat(path.join(dataB, "layers/l1/etc/gone"));
    expect(gone.isCharacterDevice() && gone.rdev).toBe(0);
    expect((await storeB.layers.holders("layers/l1")).sort()).toEqual(["a", "b"]);
    expect(await leftovers(dataB)).toEqual([]);
    // what it holds it does not fetch again
    const before = requests.length;
    await syncB.ensure(["layers/l1"]);
    expect(requests.length).toBe(before);
  });

  it("fetches image paths into a parent it creates", async () => {
    await makeLayer(path.join(dataA, "images/base-1/rootfs"));
    await syncA.publish(["images/base-1/rootfs"]);
    await syncB.ensure(["images/base-1/rootfs"]);
    expect(await snapshotTree(path.join(dataB, "images/base-1/rootfs"))).toEqual(
      await snapshotTree(path.join(dataA, "images/base-1/rootfs")),
    );
  });

  it("shares one fetch among concurrent callers", async () => {
    await makeLayer(path.join(dataA, "layers/l2"));
    await syncA.publish(["layers/l2"]);
    const before = requests.length;
    await Promise.all([
      syncB.ensure(["layers/l2"]),
      syncB.ensure(["layers/l2"]),
      syncB.ensure(["layers/l2", "layers/l1"]),
    ]);
    expect(requests.slice(before)).toEqual([`/node/layers?path=${encodeURIComponent("layers/l2")}`]);
  });

  it("refuses a layer whose digest is not the catalog's and leaves nothing behind", async () => {
    await makeLayer(path.join(dataA, "layers/l3"));
    const { bytes } = await layerDigest(path.join(dataA, "layers/l3"));
    await storeA.layers.publish({ path: "layers/l3", digest: `sha256:${"0".repeat(64)}`, bytes }, "a");
    await expect(syncB.ensure(["layers/l3"])).rejects.toThrow(
      /layer layers\/l3 from node a: digest mismatch/,
    );
    expect(await exists(path.join(dataB, "layers/l3"))).toBe(false);
    expect(await leftovers(dataB)).toEqual([]);
    expect(await storeB.layers.holders("layers/l3")).toEqual(["a"]);
  });

  it("refuses a cut stream and leaves nothing behind", async () => {
    await makeLayer(path.join(dataA, "layers/l4"));
    const record = await layerDigest(path.join(dataA, "layers/l4"));
    await storeA.layers.publish({ path: "layers/l4", ...record }, "0cut");
    await expect(syncB.ensure(["layers/l4"])).rejects.toThrow(/layer layers\/l4 from node 0cut: /);
    expect(await exists(path.join(dataB, "layers/l4"))).toBe(false);
    expect(await leftovers(dataB)).toEqual([]);
  });

  it("tries the next holder when one fails", async () => {
    await makeLayer(path.join(dataA, "layers/l5"));
    await storeA.layers.publish(
      { path: "layers/l5", ...(await layerDigest(path.join(dataA, "layers/l5"))) },
      "0cut",
    );
    await storeA.layers.addCopy("layers/l5", "a");
    await syncB.ensure(["layers/l5"]);
    expect(cutRequests).toContain(`/node/layers?path=${encodeURIComponent("layers/l5")}`);
    expect(await exists(path.join(dataB, "layers/l5/etc/file"))).toBe(true);
  });

  it("waits for a layer no node holds yet, then gives up", async () => {
    await expect(syncB.ensure(["layers/nowhere"], { waitMs: 300 })).rejects.toThrow(
      "layer layers/nowhere is on no node that answers",
    );
    await makeLayer(path.join(dataA, "layers/l6"));
    const later = setTimeout(() => void syncA.publish(["layers/l6"]), 300);
    try {
      await syncB.ensure(["layers/l6"], { waitMs: 10_000 });
    } finally {
      clearTimeout(later);
    }
    expect(await exists(path.join(dataB, "layers/l6/etc/file"))).toBe(true);
  });

  it("keeps layers in the shared store, where a node finds one whose holders are gone", async () => {
    const shared = path.join(root, "shared");
    await mkdir(shared);
    const dataC = path.join(root, "c");
    const withShared = (store: Store, dataDir: string, nodeId: string) =>
      new LayerSync({
        store,
        dataDir,
        nodeId,
        secret: SECRET,
        log: silentLogger,
        nodeUrl,
        sharedDir: shared,
      });
    // holder "gone" is in the catalog but answers nowhere
    const nodeUrl = async (id: string) => (id === "gone" ? "http://127.0.0.1:9" : undefined);
    await makeLayer(path.join(dataA, "layers/l7"));
    await withShared(storeA, dataA, "gone").publish(["layers/l7"]);
    const record = await storeA.layers.get("layers/l7");
    const archive = path.join(shared, `${record!.digest.replace("sha256:", "")}.tar`);
    expect((await lstat(archive)).size).toBe(record!.bytes);
    expect((await readdir(shared)).filter((n) => n.startsWith(".tmp-"))).toEqual([]);
    const storeC = await openStore({
      dataDir: dataC,
      databaseUrl: `sqlite:${path.join(root, "catalog.db")}`,
      nodeId: "c",
    });
    try {
      await withShared(storeC, dataC, "c").ensure(["layers/l7"]);
      expect(await snapshotTree(path.join(dataC, "layers/l7"))).toEqual(
        await snapshotTree(path.join(dataA, "layers/l7")),
      );
      expect(await storeC.layers.holders("layers/l7")).toEqual(expect.arrayContaining(["gone", "c"]));
      // a damaged archive is refused like a damaged transfer
      await writeFile(archive, Buffer.alloc(record!.bytes));
      await rm(path.join(dataC, "layers/l7"), { recursive: true });
      await expect(withShared(storeC, dataC, "c").ensure(["layers/l7"])).rejects.toThrow(/shared store/);
      expect(await exists(path.join(dataC, "layers/l7"))).toBe(false);
      expect(await leftovers(dataC)).toEqual([]);
    } finally {
      await storeC.close();
    }
  });

  it("refuses paths outside layers/ and images/", async () => {
    const before = requests.length;
    for (const bad of ["/etc", "layers/../x", "tmp/x", "layers/", "layers/.fetch-1", "layers//x"]) {
      await expect(syncB.ensure([bad])).rejects.toThrow(/bad layer path/);
      await expect(syncA.publish([bad])).rejects.toThrow(/bad layer path/);
    }
    expect(requests.length).toBe(before);
  });
});

describe("GET /node/layers", () => {
  const get = (query: string, auth?: string) =>
    fetch(`${urlA}/node/layers${query}`, { headers: auth ? { authorization: auth } : {} });

  it("wants the cluster secret", async () => {
    for (const auth of [undefined, "Bearer wrong", `Basic ${SECRET}`, `Bearer ${SECRET}x`]) {
      const res = await get("?path=layers%2Fl1", auth);
      expect(res.status).toBe(401);
      expect(await res.json()).toEqual({ code: 401, message: expect.any(String) });
    }
  });

  it("answers 400 for a bad path, 404 for a layer it lacks, the tar stream otherwise", async () => {
    const auth = `Bearer ${SECRET}`;
    const bad = await get(`?path=${encodeURIComponent("layers/../../etc")}`, auth);
    expect(bad.status).toBe(400);
    expect(await bad.json()).toEqual({ code: 400, message: expect.stringContaining("bad layer path") });
    const missing = await get("?path=layers%2Fnope", auth);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ code: 404, message: "node a has no layer layers/nope" });
    const ok = await get("?path=layers%2Fl1", auth);
    expect(ok.status).toBe(200);
    expect(ok.headers.get("content-type")).toBe("application/x-tar");
    expect((await ok.arrayBuffer()).byteLength).toBe((await storeA.layers.get("layers/l1"))?.bytes);
  });

  it("leaves other URLs to the next handler", async () => {
    const res = await fetch(`${urlA}/sandboxes`);
    expect(res.status).toBe(404);
    expect(await res.text()).toBe("not mine");
  });
});
