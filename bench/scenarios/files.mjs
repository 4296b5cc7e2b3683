// Files and streams through the unchanged public e2b client (client → proxy → envd), each beside
// its floors measured in the same run (on this host, inside the same sandbox, and the client
// alone): 10,000 small files written (`files.write([...])`, multipart) and listed (`files.list`,
// ListDir depth 1), 100 MB of stdout (`commands.run`), and a 64 MiB upload (`files.write`) and
// download (`files.read`, bytes).

import { spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createReadStream, createWriteStream, lstatSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { copyFile, writeFile } from "node:fs/promises";
import http from "node:http";
import { createRequire } from "node:module";
import path from "node:path";
import { pipeline } from "node:stream/promises";
import { smallFile } from "../floors.mjs";
import { bench, HERE, log, mbps, more, now, PKG, pipeBytes, scenario, stats, timeMany } from "../lib.mjs";
import { createSandbox, killSandbox } from "../platform.mjs";

// the multipart parser envd uses, for the loopback floor of many small files
const busboy = createRequire(PKG("envd/package.json"))("busboy");

export const SMALL_FILES = 10_000;
/** Files per `files.write([...])` call: one multipart request each. */
export const SMALL_BATCH = 1_000;
const STREAM_BYTES = 100_000_000;
const BLOB_BYTES = 64 * 1024 * 1024;

/** The same-run floors of the four paths, once per run (bench.results.files.floors). */
async function filesFloors(scratch) {
  const F = {};
  await scenario("files floor: local write, readdir and readdir+lstat of 10,000 small files", async () => {
    const write = [];
    const readdirOnly = [];
    const readdirStat = [];
    const t0 = now();
    for (let r = 0; r < 3 && more(r, t0, 2, 30_000); r++) {
      const dir = path.join(scratch, `files-floor-${r}`);
      mkdirSync(dir, { recursive: true });
      let t = now();
      // 100 at a time, as a server writing the parts of a multipart body could
      for (let i = 0; i < SMALL_FILES; i += 100)
        await Promise.all(
          Array.from({ length: 100 }, (_, j) => writeFile(path.join(dir, `f${i + j}.txt`), smallFile(i + j))),
        );
      write.push(now() - t);
      t = now();
      const names = readdirSync(dir);
      readdirOnly.push(now() - t);
      t = now();
      // what ListDir reports needs a stat per entry: the cheapest way to get it here
      let size = 0;
      for (const name of readdirSync(dir)) size += lstatSync(path.join(dir, name)).size;
      readdirStat.push(now() - t);
      if (names.length !== SMALL_FILES || size === 0) throw new Error(`listed ${names.length} files`);
      rmSync(dir, { recursive: true, force: true });
    }
    F.write10kFiles = stats(write);
    F.readdir10kFiles = stats(readdirOnly);
    F.readdirStat10kFiles = stats(readdirStat);
  });
  await scenario("files floor: local pipe of 100 MB", async () => {
    const s = stats(await timeMany(3, () => pipeBytes("head", ["-c", String(STREAM_BYTES), "/dev/zero"])));
    F.pipe100MB = { ...s, mbps: mbps(STREAM_BYTES, s.p50) };
  });
  await scenario("files floor: local copy of 64 MiB", async () => {
    const src = path.join(scratch, "files-floor-blob");
    await writeFile(src, randomBytes(BLOB_BYTES));
    const s = stats(await timeMany(5, (i) => copyFile(src, `${src}-${i}`)));
    F.copy64MiB = { ...s, mbps: mbps(BLOB_BYTES, s.p50) };
    for (let i = 0; i < 5; i++) rmSync(`${src}-${i}`, { force: true });
    rmSync(src, { force: true });
  });
  return F;
}

/** Writes each file part of a multipart body under `dir` (its filename a relative path), as envd would. */
function writeParts(req, res, dir) {
  const parser = busboy({ headers: req.headers });
  const writes = [];
  parser.on("file", (_field, stream, { filename }) => {
    const file = path.join(dir, path.normalize(filename).replace(/^(\.\.(\/|$))+/, ""));
    mkdirSync(path.dirname(file), { recursive: true });
    writes.push(pipeline(stream, createWriteStream(file)));
  });
  parser.on("close", () =>
    Promise.all(writes).then(
      () => res.writeHead(200, { "content-type": "application/json" }).end(`{"files":${writes.length}}`),
      () => res.writeHead(500).end(),
    ),
  );
  req.pipe(parser);
}

/**
 * A plain HTTP server on loopback: what is POSTed to a path is stored under `dir` and served back
 * on GET, and a multipart POST to /multipart has each part written as a file. The floor of an
 * upload, a download and many small files through the client's own HTTP stack.
 */
async function loopbackFileServer(dir) {
  mkdirSync(dir, { recursive: true });
  const server = http.createServer((req, res) => {
    if (req.method === "POST" && req.url === "/multipart") return writeParts(req, res, dir);
    const file = path.join(dir, path.basename(req.url ?? "/blob"));
    const done = (status) => () => res.writeHead(status).end();
    if (req.method === "POST") pipeline(req, createWriteStream(file)).then(done(204), done(500));
    else pipeline(createReadStream(file), res).catch(() => res.destroy());
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `http://127.0.0.1:${server.address().port}`,
    close: () =>
      new Promise((resolve) => server.close(resolve)).finally(() =>
        rmSync(dir, { recursive: true, force: true }),
      ),
  };
}

/**
 * The four paths in one sandbox of runtime `rt`, through the public client in a process of its
 * own (files-client.mjs), as a user's would be: in this process it would share a thread with the
 * platform's proxy.
 */
async function filesThroughClient(ctx, rt, scratch) {
  const created = await createSandbox(ctx, rt);
  const loopback = await loopbackFileServer(path.join(scratch, `files-loopback-${rt}`));
  try {
    const env = {
      ...process.env,
      E2B_API_URL: ctx.apiUrl,
      E2B_SANDBOX_URL: ctx.proxyUrl,
      E2B_API_KEY: ctx.apiKey,
    };
    const client = path.join(HERE, "scenarios", "files-client.mjs");
    const child = spawn(process.execPath, [client, created.id, loopback.url], {
      env,
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.on("data", (d) => (out += d));
    const code = await new Promise((resolve) => child.on("close", resolve));
    const R = {};
    for (const line of out.split("\n").filter(Boolean)) {
      const m = JSON.parse(line);
      if (m.error) throw new Error(`${rt}: ${m.step}: ${m.error}`);
      R[m.figure] = m.bytes
        ? { ...stats(m.samples), mbps: mbps(m.bytes, stats(m.samples).p50) }
        : stats(m.samples);
      log(`  ${rt}: ${m.figure} p50 ${R[m.figure].p50.toFixed(0)} ms`);
    }
    if (code !== 0) throw new Error(`${rt}: the client process ended with ${code}`);
    if (R.write10kFiles) R.write10kFiles.batch = SMALL_BATCH;
    return R;
  } finally {
    await loopback.close();
    await killSandbox(ctx, created.id);
  }
}

/** Floors once, then every runtime's figures, into bench.results.files. */
export async function filesScenarios(ctx, runtimes, scratch) {
  const out = { floors: await filesFloors(scratch) };
  bench.results.files = out;
  for (const rt of runtimes)
    await scenario(`${rt}: files and streams through the e2b client`, async () => {
      out[rt] = await filesThroughClient(ctx, rt, scratch);
    });
}

/** Two figures' p50s added, as one figure (undefined when either is missing). */
const sum = (a, b) => (a?.p50 === undefined || b?.p50 === undefined ? undefined : { p50: a.p50 + b.p50 });
const rate = (s) => (s?.mbps === undefined ? "–" : `${s.mbps.toFixed(0)} MB/s`);
const pct = (a, b) => (a && b ? `${((a / b) * 100).toFixed(0)}%` : "–");

/**
 * The throughputs, each beside the kernel's floor (the target) and beside what the
 * unchanged client alone can take in the same run: [figure, its result, the kernel floor and its
 * name, target, why, the client floor and its name].
 */
const THROUGHPUTS = [
  [
    "100 MB of stdout (`commands.run`)",
    "stream100MB",
    ["pipe100MB", "local pipe", "≥ 50%"],
    [
      "clientDecode100MB",
      "beside what the client alone can take",
      "the client parsing and decoding the same events, no network",
    ],
  ],
  [
    "64 MiB upload (`files.write`)",
    "upload64MiB",
    ["copy64MiB", "local copy", "≥ 60%"],
    [
      "loopbackUpload64MiB",
      "beside the client's HTTP to a plain server",
      "the client's fetch to a Node server on loopback writing the disk",
    ],
  ],
  [
    "64 MiB download (`files.read`)",
    "download64MiB",
    ["copy64MiB", "local copy", "≥ 60%"],
    [
      "loopbackDownload64MiB",
      "beside the client's HTTP from a plain server",
      "the client's fetch from a Node server on loopback reading the disk",
    ],
  ],
];

/** One call on one path, as the default user: [figure, its key, its floor's key]. */
const SINGLE_CALLS = [
  ["one call: `files.makeDir` (two new levels)", "makeDir1", "loopbackPost1"],
  ["one call: `files.write` of a 10-byte file", "write1", "loopbackPost1"],
  ["one call: `files.exists`", "exists1", "loopbackGet1"],
  ["one call: `files.getInfo`", "getInfo1", "loopbackGet1"],
  ["one call: `files.read` of a 10-byte file", "read1", "loopbackGet1"],
];
/** What each single call's floor does. */
const LOOPBACK_CALLS = { loopbackPost1: "POST writing", loopbackGet1: "GET reading" };

/** Each throughput's floor inside the sandbox: [its figure, what it is]. */
const INSIDE_RATES = {
  stream100MB: ["sandboxPipe100MB", "head piped to cat"],
  upload64MiB: ["sandboxCopy64MiB", "cp"],
  download64MiB: ["sandboxCopy64MiB", "cp"],
};

function rateRows(rt, R, F, [figure, key, [floorKey, floorName, target], [clientKey, why, clientName]]) {
  const result = R[key];
  const [insideKey, insideName] = INSIDE_RATES[key];
  return [
    [
      figure,
      rt,
      rate(result),
      `${floorName} ${rate(F[floorKey])}`,
      pct(result?.mbps, F[floorKey]?.mbps),
      target,
    ],
    [
      `↳ the same, ${why}`,
      rt,
      rate(result),
      `${clientName}: ${rate(R[clientKey])}`,
      pct(result?.mbps, R[clientKey]?.mbps),
      "",
    ],
    [
      "↳ the same, beside the same work inside this sandbox",
      rt,
      rate(result),
      `${insideName} in the sandbox: ${rate(R[insideKey])}`,
      pct(result?.mbps, R[insideKey]?.mbps),
      "",
    ],
  ];
}

/** Rows of the report: [figure, runtime, result, floor, ratio, target]. */
export function filesRows(files) {
  const F = files?.floors ?? {};
  const rows = [];
  const ms = (s, digits = 0) => (s?.p50 === undefined ? "–" : `${s.p50.toFixed(digits)} ms`);
  const times = (a, b) => (a && b ? `${(a / b).toFixed(1)}×` : "–");
  for (const [rt, R] of Object.entries(files ?? {})) {
    if (rt === "floors") continue;
    rows.push(
      [
        `write ${SMALL_FILES} small files (\`files.write\`, ${SMALL_BATCH} per request)`,
        rt,
        ms(R.write10kFiles),
        `local write ${ms(F.write10kFiles)}`,
        times(R.write10kFiles?.p50, F.write10kFiles?.p50),
        "≤ 2×",
      ],
      [
        "↳ the same, beside the client's multipart to a plain server",
        rt,
        ms(R.write10kFiles),
        `the client's FormData and fetch to a Node server on loopback writing each part: ${ms(R.loopbackWrite10kFiles)}`,
        times(R.write10kFiles?.p50, R.loopbackWrite10kFiles?.p50),
        "",
      ],
      [
        "↳ the same, beside the same work inside this sandbox",
        rt,
        ms(R.write10kFiles),
        `Node writing them 100 at a time in the sandbox: ${ms(R.sandboxWrite10kFiles)}`,
        times(R.write10kFiles?.p50, R.sandboxWrite10kFiles?.p50),
        "",
      ],
      [
        `list ${SMALL_FILES} files (\`files.list\`, ListDir depth 1)`,
        rt,
        ms(R.list10kFiles),
        `local readdir+lstat ${ms(F.readdirStat10kFiles)} (readdir alone ${ms(F.readdir10kFiles)})`,
        times(R.list10kFiles?.p50, F.readdirStat10kFiles?.p50),
        "≤ 5×",
      ],
      [
        "↳ the same, beside the same work inside this sandbox",
        rt,
        ms(R.list10kFiles),
        `readdir+lstat by Node in the sandbox: ${ms(R.sandboxReaddirStat10kFiles)}`,
        times(R.list10kFiles?.p50, R.sandboxReaddirStat10kFiles?.p50),
        "",
      ],
      [
        "↳ the same, beside that and the client's own parse of the answer",
        rt,
        ms(R.list10kFiles),
        `readdir+lstat in the sandbox + the client parsing 10,000 entries (no network, ${ms(R.clientParseList10k)}): ${ms(sum(R.sandboxReaddirStat10kFiles, R.clientParseList10k))}`,
        times(R.list10kFiles?.p50, sum(R.sandboxReaddirStat10kFiles, R.clientParseList10k)?.p50),
        "",
      ],
      ...THROUGHPUTS.flatMap((t) => rateRows(rt, R, F, t)),
      ...SINGLE_CALLS.map(([figure, key, floorKey]) => [
        figure,
        rt,
        ms(R[key], 1),
        `the client's fetch to a Node server on loopback, ${LOOPBACK_CALLS[floorKey]} a small file: ${ms(R[floorKey], 1)}`,
        times(R[key]?.p50, R[floorKey]?.p50),
        "",
      ]),
    );
  }
  return rows;
}

/** The report's section: each figure beside its same-run floor. */
export function filesSection(files) {
  const rows = filesRows(files);
  if (rows.length === 0) return "";
  return [
    "## Files and streams through the e2b client (p50, beside the same-run floor)",
    "",
    "| figure | runtime | result | floor | ratio | target |",
    "|---|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
    "",
  ].join("\n");
}
