// The client side of scenarios/files.mjs, in a process of its own: the unchanged public e2b client
// (E2B_API_URL, E2B_SANDBOX_URL, E2B_API_KEY from the environment) on the sandbox named in argv.
// One JSON line per figure on stdout: {figure, samples (ms), bytes?} or {step, error}.
import { randomBytes } from "node:crypto";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { smallFile } from "../floors.mjs";

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..");
const requireFromPlatform = createRequire(path.join(ROOT, "packages", "platform", "package.json"));
const { Sandbox } = requireFromPlatform("e2b");
// the client's own protobuf runtime: it parses every output event with it
const requireFromClient = createRequire(requireFromPlatform.resolve("e2b"));
const { fromJsonString } = requireFromClient("@bufbuild/protobuf");
// the same messages (process.proto), from the project's generated client
const { ListDirResponseSchema, StartResponseSchema } = await import(
  path.join(ROOT, "packages", "envd-client", "dist", "index.js")
);
const SMALL_FILES = 10_000;
const SMALL_BATCH = 1_000;
const STREAM_BYTES = 100_000_000;
const BLOB_BYTES = 64 * 1024 * 1024;
const now = () => performance.now();
const emit = (m) => process.stdout.write(`${JSON.stringify(m)}\n`);

/** Up to `max` repetitions, at least `min`, while one more fits in `capMs`. */
async function repeat(min, max, capMs, fn) {
  const t0 = now();
  for (let i = 0; i < max; i++) {
    if (i >= min && now() - t0 + (now() - t0) / i > capMs) break;
    await fn(i);
  }
}

async function step(name, fn) {
  try {
    await fn();
  } catch (err) {
    emit({ step: name, error: err instanceof Error ? err.message : String(err) });
    process.exitCode = 1;
  }
}

const sandbox = await Sandbox.connect(process.argv[2]);

await step("small files", async () => {
  const write = [];
  const list = [];
  await repeat(2, 3, 60_000, async (r) => {
    const dir = `/home/user/many-${r}`;
    let t = now();
    for (let i = 0; i < SMALL_FILES; i += SMALL_BATCH) {
      const batch = [];
      for (let j = i; j < Math.min(SMALL_FILES, i + SMALL_BATCH); j++)
        batch.push({ path: `${dir}/f${j}.txt`, data: smallFile(j) });
      await sandbox.files.write(batch);
    }
    write.push(now() - t);
    t = now();
    const listed = await sandbox.files.list(dir);
    list.push(now() - t);
    if (listed.length !== SMALL_FILES)
      throw new Error(`listed ${listed.length} entries, expected ${SMALL_FILES}`);
    await sandbox.files.remove(dir);
  });
  emit({ figure: "write10kFiles", samples: write });
  emit({ figure: "list10kFiles", samples: list });
  // What the client alone pays for a listing: parsing the ListDir answer of 10,000 entries (as
  // envd writes it) with its own protobuf runtime, no network.
  const entries = Array.from({ length: SMALL_FILES }, (_, j) => ({
    name: `f${j}.txt`,
    type: "FILE_TYPE_FILE",
    path: `/home/user/many-0/f${j}.txt`,
    size: String(smallFile(j).length),
    mode: 420,
    permissions: "-rw-r--r--",
    owner: "user",
    group: "user",
    modifiedTime: "2026-11-27T15:20:01.123456789Z",
  }));
  const answer = JSON.stringify({ entries });
  const parse = [];
  for (let r = 0; r < 3; r++) {
    const t = now();
    if (fromJsonString(ListDirResponseSchema, answer).entries.length !== SMALL_FILES)
      throw new Error("parse");
    parse.push(now() - t);
  }
  emit({ figure: "clientParseList10k", samples: parse });
  // The same batches built as this client builds them (one FormData part per file, named by its
  // path) and sent by its fetch to a plain Node server on the host that writes each part
  // (files.mjs's loopback server): what the client and a multipart parser cost, no proxy or envd.
  const loopback = process.argv[3];
  if (!loopback) return;
  const lwrite = [];
  await repeat(2, 3, 30_000, async (r) => {
    const t = now();
    for (let i = 0; i < SMALL_FILES; i += SMALL_BATCH) {
      const form = new FormData();
      for (let j = i; j < Math.min(SMALL_FILES, i + SMALL_BATCH); j++)
        form.append("file", new Blob([smallFile(j)]), `many-${r}/f${j}.txt`);
      const res = await fetch(`${loopback}/multipart`, { method: "POST", body: form });
      if (!res.ok) throw new Error(`loopback multipart answered ${res.status}`);
      await res.arrayBuffer();
    }
    lwrite.push(now() - t);
  });
  emit({ figure: "loopbackWrite10kFiles", samples: lwrite });
});

await step("single calls", async () => {
  // what an agent pays per call on one path, as the sandbox's default user (envd checks the
  // user's rights on every ancestor of the path)
  const calls = { exists1: [], getInfo1: [], makeDir1: [], write1: [], read1: [] };
  const timed = async (key, fn) => {
    const t = now();
    await fn();
    calls[key].push(now() - t);
  };
  for (let i = 0; i < 30; i++) {
    const file = `/home/user/calls/f${i}.txt`;
    await timed("makeDir1", () => sandbox.files.makeDir(`/home/user/calls/d${i}/a`));
    await timed("write1", () => sandbox.files.write(file, `call ${i}\n`));
    await timed("exists1", () => sandbox.files.exists(file));
    await timed("getInfo1", () => sandbox.files.getInfo(file));
    await timed("read1", () => sandbox.files.read(file));
  }
  await sandbox.files.remove("/home/user/calls");
  for (const [figure, samples] of Object.entries(calls)) emit({ figure, samples });
  // the floor: the same client's fetch to a plain Node server on loopback writing (POST) or
  // reading (GET) a small file, no proxy, envd or sandbox (argv[3], files.mjs's loopback server)
  const loopback = process.argv[3];
  if (!loopback) return;
  const post = [];
  const get = [];
  for (let i = 0; i < 30; i++) {
    let t = now();
    await (await fetch(`${loopback}/call${i}.txt`, { method: "POST", body: `call ${i}\n` })).arrayBuffer();
    post.push(now() - t);
    t = now();
    await (await fetch(`${loopback}/call${i}.txt`)).arrayBuffer();
    get.push(now() - t);
  }
  emit({ figure: "loopbackPost1", samples: post });
  emit({ figure: "loopbackGet1", samples: get });
});

await step("stdout", async () => {
  const samples = [];
  await repeat(2, 3, 60_000, async () => {
    const t = now();
    const result = await sandbox.commands.run(`head -c ${STREAM_BYTES} /dev/zero`, { timeoutMs: 0 });
    samples.push(now() - t);
    if (result.stdout.length !== STREAM_BYTES)
      throw new Error(`got ${result.stdout.length} characters of stdout, expected ${STREAM_BYTES}`);
  });
  emit({ figure: "stream100MB", samples, bytes: STREAM_BYTES });
  // What the client alone can take: Connect JSON carries output as base64 in one JSON message per
  // chunk, which this client parses (protobuf-es scans every character for duplicate keys) and
  // decodes in JavaScript, then turns into text: its own CPU per byte, with no network at all.
  const bytes = Buffer.alloc(64 << 10, 0);
  const message = `{"event":{"data":{"stdout":"${bytes.toString("base64")}"}}}`;
  const decoder = new TextDecoder();
  const decode = [];
  for (let r = 0; r < 3; r++) {
    const t = now();
    let chars = 0;
    for (let n = 0; n < STREAM_BYTES; n += bytes.length) {
      const event = fromJsonString(StartResponseSchema, message).event?.event;
      chars += decoder.decode(event.value.output.value, { stream: true }).length;
    }
    decode.push(now() - t);
    if (chars < STREAM_BYTES) throw new Error(`decoded ${chars} characters`);
  }
  emit({ figure: "clientDecode100MB", samples: decode, bytes: STREAM_BYTES });
});

await step("upload and download", async () => {
  const blob = randomBytes(BLOB_BYTES);
  const up = [];
  const down = [];
  await repeat(3, 5, 60_000, async (i) => {
    let t = now();
    await sandbox.files.write("/tmp/bench.bin", blob);
    up.push(now() - t);
    t = now();
    const got = await sandbox.files.read("/tmp/bench.bin", { format: "bytes" });
    down.push(now() - t);
    if (got.length !== BLOB_BYTES) throw new Error(`downloaded ${got.length} bytes, expected ${BLOB_BYTES}`);
    if (i === 0 && !Buffer.from(got).equals(blob)) throw new Error("downloaded bytes differ from uploaded");
  });
  await sandbox.files.remove("/tmp/bench.bin");
  emit({ figure: "upload64MiB", samples: up, bytes: BLOB_BYTES });
  emit({ figure: "download64MiB", samples: down, bytes: BLOB_BYTES });
  // The same bytes through this client's HTTP stack (fetch, a multipart body as it builds one)
  // to a plain Node server on the host that writes them to disk and reads them back
  // (argv[3], files.mjs's loopback server): no proxy, no envd, no sandbox.
  const loopback = process.argv[3];
  if (!loopback) return;
  const lup = [];
  const ldown = [];
  await repeat(3, 5, 30_000, async () => {
    let t = now();
    const form = new FormData();
    form.append("file", new Blob([blob]), "bench.bin");
    const put = await fetch(`${loopback}/bench.bin`, { method: "POST", body: form });
    if (!put.ok) throw new Error(`loopback upload answered ${put.status}`);
    await put.arrayBuffer();
    lup.push(now() - t);
    t = now();
    const got = await fetch(`${loopback}/bench.bin`);
    const body = new Uint8Array(await got.arrayBuffer());
    ldown.push(now() - t);
    if (body.length < BLOB_BYTES) throw new Error(`loopback download gave ${body.length} bytes`);
  });
  emit({ figure: "loopbackUpload64MiB", samples: lup, bytes: BLOB_BYTES });
  emit({ figure: "loopbackDownload64MiB", samples: ldown, bytes: BLOB_BYTES });
});

// The same work inside this sandbox, by its own programs, no client, proxy or envd in the way:
// the floor each figure has under this runtime (gVisor's system calls cost what they cost).
// Timed inside: 10,000 small files written 100 at a time and listed with a readdir and an
// lstat each by Node, a pipe by head and cat, a copy by cp.
const INSIDE = `
const fs = require("fs"), fsp = require("fs/promises"), path = require("path");
const { execFileSync } = require("child_process");
const now = () => performance.now();
const small = (i) => "file " + i + ": " + "x".repeat(64) + "\\n";
const out = {};
(async () => {
  const dir = "/home/user/floor-many";
  fs.mkdirSync(dir, { recursive: true });
  let t = now();
  for (let i = 0; i < ${SMALL_FILES}; i += 100)
    await Promise.all(Array.from({ length: 100 }, (_, j) => fsp.writeFile(path.join(dir, "f" + (i + j) + ".txt"), small(i + j))));
  out.write = now() - t;
  t = now();
  let size = 0;
  for (const name of fs.readdirSync(dir)) size += fs.lstatSync(path.join(dir, name)).size;
  out.list = now() - t;
  if (size === 0) throw new Error("listed nothing");
  fs.rmSync(dir, { recursive: true, force: true });
  t = now();
  execFileSync("sh", ["-c", "head -c ${STREAM_BYTES} /dev/zero | cat > /dev/null"]);
  out.pipe = now() - t;
  execFileSync("sh", ["-c", "head -c ${BLOB_BYTES} /dev/urandom > /tmp/floor.bin"]);
  t = now();
  execFileSync("cp", ["/tmp/floor.bin", "/tmp/floor-copy.bin"]);
  out.copy = now() - t;
  fs.rmSync("/tmp/floor.bin");
  fs.rmSync("/tmp/floor-copy.bin");
  process.stdout.write(JSON.stringify(out));
})().catch((err) => { console.error(err); process.exit(1); });
`;

await step("the same work inside the sandbox", async () => {
  await sandbox.files.write("/tmp/floor.cjs", INSIDE);
  const runs = [];
  await repeat(2, 3, 60_000, async () => {
    const result = await sandbox.commands.run("node /tmp/floor.cjs", { timeoutMs: 0 });
    runs.push(JSON.parse(result.stdout));
  });
  await sandbox.files.remove("/tmp/floor.cjs");
  emit({ figure: "sandboxWrite10kFiles", samples: runs.map((r) => r.write) });
  emit({ figure: "sandboxReaddirStat10kFiles", samples: runs.map((r) => r.list) });
  emit({ figure: "sandboxPipe100MB", samples: runs.map((r) => r.pipe), bytes: STREAM_BYTES });
  emit({ figure: "sandboxCopy64MiB", samples: runs.map((r) => r.copy), bytes: BLOB_BYTES });
});
