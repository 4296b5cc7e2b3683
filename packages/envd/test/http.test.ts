import { execFileSync } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { once } from "node:events";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  utimesSync,
  writeFileSync,
} from "node:fs";
import http2 from "node:http2";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { getSignature, Sandbox } from "e2b";
import { readMetadata } from "../src/filesystem/metadata.js";
import { ENVD_VERSION } from "../src/state.js";
import { type RunningEnvd, startEnvd, tempDir } from "./helpers/envd-process.js";

const TOKEN = "http-test-token";
const NOBODY = { name: "nobody", uid: 65534, gid: 65534 };
/** A regular file even root cannot open for reading (mode 0200 in procfs). */
const UNREADABLE = "/proc/sys/vm/compact_memory";

let envd: RunningEnvd;
let dir: string;

beforeAll(async () => {
  envd = await startEnvd({ accessToken: TOKEN });
  dir = tempDir("envd-http-");
});

afterAll(async () => {
  await envd?.stop();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** fetch against envd with the access token unless `headers` says otherwise. */
function call(pathAndQuery: string, init: RequestInit & { token?: string | null } = {}): Promise<Response> {
  const { token = TOKEN, headers, ...rest } = init;
  const all = new Headers(headers);
  if (token !== null) all.set("X-Access-Token", token);
  return fetch(`${envd.url}${pathAndQuery}`, { ...rest, headers: all });
}

function filesUrl(params: Record<string, string>): string {
  return `/files?${new URLSearchParams(params)}`;
}

async function expectError(res: Response, status: number, mentions?: string): Promise<string> {
  expect(res.status).toBe(status);
  expect(res.headers.get("content-type")).toBe("application/json");
  const body = (await res.json()) as { message: string; code: number };
  expect(body.code).toBe(status);
  expect(typeof body.message).toBe("string");
  if (mentions) expect(body.message).toContain(mentions);
  return body.message;
}

function form(files: Array<{ name: string; data: string | Buffer }>): FormData {
  const data = new FormData();
  for (const file of files)
    data.append(
      "file",
      new Blob([typeof file.data === "string" ? file.data : new Uint8Array(file.data)]),
      file.name,
    );
  return data;
}

function sha256(data: Buffer): string {
  return createHash("sha256").update(data).digest("hex");
}

describe("health, routing and the access token", () => {
  test("GET /health answers 204 without a token", async () => {
    const res = await call("/health", { token: null });
    expect(res.status).toBe(204);
  });

  test("a connection reset before its first byte (a port probe) leaves envd serving", async () => {
    for (let i = 0; i < 3; i++) {
      const socket = net.connect({ host: "127.0.0.1", port: envd.port });
      await once(socket, "connect");
      socket.resetAndDestroy();
      await once(socket, "close");
    }
    await new Promise((r) => setTimeout(r, 100));
    expect((await call("/health", { token: null })).status).toBe(204);
  });

  test("unknown routes are 404 JSON, a known path with another method 405", async () => {
    await expectError(await call("/nope"), 404, "/nope");
    const res = await call("/envs", { method: "DELETE" });
    expect(res.headers.get("allow")).toBe("GET");
    await expectError(res, 405);
  });

  test.each([
    ["GET", "/envs"],
    ["GET", "/metrics"],
    ["GET", "/files?path=/etc/hostname"],
    ["POST", "/files?path=/tmp/never-written"],
    ["POST", "/files/compose"],
    ["POST", "/init"],
  ])("%s %s without or with a wrong token is 401", async (method, route) => {
    await expectError(await call(route, { method, token: null }), 401, "access token");
    await expectError(await call(route, { method, token: "wrong" }), 401, "access token");
  });
});

describe("GET /envs and /metrics", () => {
  test("envs is a JSON object of strings", async () => {
    const { data, response } = await envd.client.http.GET("/envs");
    expect(response.status).toBe(200);
    expect(typeof data).toBe("object");
    for (const value of Object.values(data ?? {})) expect(typeof value).toBe("string");
  });

  test("metrics has every field the client reads, with sane values", async () => {
    const { data, response } = await envd.client.http.GET("/metrics");
    expect(response.status).toBe(200);
    const m = data!;
    const MiB = 1024 * 1024;
    expect(Math.abs(m.ts! - Date.now() / 1000)).toBeLessThan(10);
    expect(Number.isInteger(m.cpu_count)).toBe(true);
    expect(m.cpu_count).toBeGreaterThanOrEqual(1);
    expect(m.cpu_used_pct).toBeGreaterThanOrEqual(0);
    expect(m.cpu_used_pct).toBeLessThanOrEqual(100);
    expect(m.mem_total).toBeGreaterThan(0);
    expect(m.mem_used).toBeGreaterThan(0);
    expect(m.mem_used).toBeLessThanOrEqual(m.mem_total!);
    expect(m.mem_cache).toBeGreaterThanOrEqual(0);
    expect(m.mem_total_mib).toBe(Math.floor(m.mem_total! / MiB));
    expect(m.mem_used_mib).toBe(Math.floor(m.mem_used! / MiB));
    expect(m.disk_total).toBeGreaterThan(0);
    expect(m.disk_used).toBeGreaterThan(0);
    expect(m.disk_used).toBeLessThanOrEqual(m.disk_total!);
    // The second sample measures CPU over the time since the first.
    const again = await envd.client.http.GET("/metrics");
    expect(again.data?.cpu_used_pct).toBeGreaterThanOrEqual(0);
  });
});

describe("POST /files", () => {
  test("multipart with a path query writes the single part there", async () => {
    const file = path.join(dir, "single.txt");
    const res = await call(filesUrl({ path: file }), {
      method: "POST",
      body: form([{ name: "ignored-name", data: "hello" }]),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ path: file, name: "single.txt", type: "file" }]);
    expect(readFileSync(file, "utf8")).toBe("hello");
    expect(statSync(file).uid).toBe(0);
  });

  test("a 'file' part without a filename (a plain form field) is written to the path query, bytes kept", async () => {
    const file = path.join(dir, "field.txt");
    const body = new FormData();
    body.append("file", "file content — ünïcode");
    const res = await call(filesUrl({ path: file }), { method: "POST", body });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ path: file, name: "field.txt", type: "file" }]);
    expect(readFileSync(file, "utf8")).toBe("file content — ünïcode");

    const nowhere = new FormData();
    nowhere.append("file", "x");
    await expectError(await call(filesUrl({}), { method: "POST", body: nowhere }), 400, "filename");
  });

  test("multipart with several parts and no path writes each to its filename, creating parents for the user", async () => {
    const base = path.join(dir, "multi");
    mkdirSync(base);
    const a = path.join(base, "x", "y", "a.txt");
    const b = path.join(base, "b ü.bin");
    const bytes = randomBytes(70_000);
    const res = await call(filesUrl({ username: "nobody" }), {
      method: "POST",
      body: form([
        { name: a, data: "first" },
        { name: b, data: bytes },
      ]),
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { path: a, name: "a.txt", type: "file" },
      { path: b, name: "b ü.bin", type: "file" },
    ]);
    expect(readFileSync(a, "utf8")).toBe("first");
    expect(readFileSync(b).equals(bytes)).toBe(true);
    for (const p of [a, b, path.join(base, "x"), path.join(base, "x", "y")]) {
      expect(statSync(p)).toMatchObject({ uid: NOBODY.uid, gid: NOBODY.gid });
    }
    expect(statSync(base).uid).toBe(0);
  });

  test("one multipart body of many parts: small and large, new and replaced, in order and owned by the user", async () => {
    const base = path.join(dir, "many-parts");
    mkdirSync(base);
    const replaced = path.join(base, "d0", "replaced.txt");
    mkdirSync(path.dirname(replaced));
    writeFileSync(replaced, "old", { mode: 0o640 });
    const large = randomBytes(300_000);
    const parts: Array<{ name: string; data: string | Buffer }> = [];
    for (let i = 0; i < 1_500; i++)
      parts.push({ name: path.join(base, `d${i % 3}`, `f${i}.txt`), data: `file ${i}` });
    parts.splice(700, 0, { name: path.join(base, "d1", "large.bin"), data: large });
    parts.splice(900, 0, { name: replaced, data: "new" });
    parts.push({ name: path.join(base, "d3", "empty"), data: "" });
    const res = await call(filesUrl({ username: "nobody" }), { method: "POST", body: form(parts) });
    expect(res.status).toBe(200);
    const written = (await res.json()) as Array<{ path: string }>;
    expect(written.map((w) => w.path)).toEqual(parts.map((p) => p.name));
    for (const part of parts) {
      const bytes = readFileSync(part.name);
      expect(bytes.equals(Buffer.from(part.data))).toBe(true);
      expect(statSync(part.name)).toMatchObject({ uid: NOBODY.uid, gid: NOBODY.gid });
    }
    expect(statSync(replaced).mode & 0o777).toBe(0o640);
    for (const d of ["d1", "d2", "d3"]) expect(statSync(path.join(base, d)).uid).toBe(NOBODY.uid);
    expect(readdirSync(path.join(base, "d0")).filter((n) => n.startsWith(".envd-"))).toEqual([]);
  });

  test("a small part through a dangling symlink creates its target; onto a directory it is refused", async () => {
    const base = path.join(dir, "small-odd");
    mkdirSync(base);
    const target = path.join(base, "target.txt");
    const link = path.join(base, "link.txt");
    symlinkSync(target, link);
    const res = await call(filesUrl({ username: "nobody" }), {
      method: "POST",
      body: form([{ name: link, data: "through the link" }]),
    });
    expect(res.status).toBe(200);
    expect(readFileSync(target, "utf8")).toBe("through the link");
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(statSync(target)).toMatchObject({ uid: NOBODY.uid, gid: NOBODY.gid });
    const sub = path.join(base, "sub");
    mkdirSync(sub);
    await expectError(
      await call(filesUrl({ username: "nobody" }), {
        method: "POST",
        body: form([{ name: sub, data: "x" }]),
      }),
      400,
      "is a directory",
    );
  });

  test("application/octet-stream writes the body to path, streamed", async () => {
    const file = path.join(dir, "octet", "big.bin");
    const bytes = randomBytes(8 * 1024 * 1024 + 123);
    const res = await call(filesUrl({ path: file }), {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: bytes,
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([{ path: file, name: "big.bin", type: "file" }]);
    expect(sha256(readFileSync(file))).toBe(sha256(bytes));
  });

  test("Content-Encoding: gzip is decompressed, for octet-stream and for multipart", async () => {
    const raw = path.join(dir, "gz-raw.txt");
    let res = await call(filesUrl({ path: raw }), {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream", "Content-Encoding": "gzip" },
      body: gzipSync("compressed text ".repeat(1000)),
    });
    expect(res.status).toBe(200);
    expect(readFileSync(raw, "utf8")).toBe("compressed text ".repeat(1000));

    const multi = path.join(dir, "gz-multi.txt");
    const request = new Request("http://x", {
      method: "POST",
      body: form([{ name: multi, data: "inside gzip" }]),
    });
    res = await call("/files", {
      method: "POST",
      headers: { "Content-Type": request.headers.get("content-type")!, "Content-Encoding": "gzip" },
      body: gzipSync(Buffer.from(await request.arrayBuffer())),
    });
    expect(res.status).toBe(200);
    expect(readFileSync(multi, "utf8")).toBe("inside gzip");

    res = await call(filesUrl({ path: path.join(dir, "gz-bad.txt") }), {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream", "Content-Encoding": "gzip" },
      body: "not gzip at all",
    });
    await expectError(res, 400, "gzip");
    expect(existsSync(path.join(dir, "gz-bad.txt"))).toBe(false);
  });

  test("overwriting keeps the mode, replaces the content and leaves no temporary file", async () => {
    const sub = path.join(dir, "overwrite");
    mkdirSync(sub);
    const file = path.join(sub, "script.sh");
    writeFileSync(file, "old content that is longer than the new one");
    chmodSync(file, 0o750);
    const res = await call(filesUrl({ path: file, username: "nobody" }), {
      method: "POST",
      headers: { "Content-Type": "application/octet-stream" },
      body: "new",
    });
    expect(res.status).toBe(200);
    expect(readFileSync(file, "utf8")).toBe("new");
    expect(statSync(file).mode & 0o777).toBe(0o750);
    expect(statSync(file).uid).toBe(NOBODY.uid);
    expect(readdirSync(sub)).toEqual(["script.sh"]);
  });

  test("X-Metadata-* headers are stored (keys lowercased) and returned; invalid ones are 400", async () => {
    const file = path.join(dir, "meta.txt");
    const res = await call(filesUrl({ path: file }), {
      method: "POST",
      headers: {
        "Content-Type": "application/octet-stream",
        "X-Metadata-Owner-Team": "infra",
        "X-Metadata-k": "v 1",
      },
      body: "with metadata",
    });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual([
      { path: file, name: "meta.txt", type: "file", metadata: { "owner-team": "infra", k: "v 1" } },
    ]);
    expect(await readMetadata(file)).toEqual({ "owner-team": "infra", k: "v 1" });

    // A new upload replaces the metadata: none sent, none left.
    const plain = await call(filesUrl({ path: file }), { method: "POST", body: "again" });
    expect(await plain.json()).toEqual([{ path: file, name: "meta.txt", type: "file" }]);
    expect(await readMetadata(file)).toEqual({});

    const long = await call(filesUrl({ path: file }), {
      method: "POST",
      headers: { [`X-Metadata-${"k".repeat(247)}`]: "v" },
      body: "x",
    });
    await expectError(long, 400, "longer than 246 bytes");
    const nonAscii = await call(filesUrl({ path: file }), {
      method: "POST",
      headers: { "X-Metadata-k": "caf\u00e9" },
      body: "x",
    });
    await expectError(nonAscii, 400, "printable US-ASCII");
    expect(readFileSync(file, "utf8")).toBe("again");
  });

  test("a directory, a missing path, two parts to one path and an unknown user are refused", async () => {
    await expectError(
      await call(filesUrl({ path: dir }), { method: "POST", body: "x" }),
      400,
      `'${dir}' is a directory`,
    );
    await expectError(
      await call("/files", {
        method: "POST",
        headers: { "Content-Type": "application/octet-stream" },
        body: "x",
      }),
      400,
      "path",
    );
    const twice = path.join(dir, "twice.txt");
    await expectError(
      await call(filesUrl({ path: twice }), {
        method: "POST",
        body: form([
          { name: "a", data: "1" },
          { name: "b", data: "2" },
        ]),
      }),
      400,
      twice,
    );
    await expectError(
      await call(filesUrl({ path: path.join(dir, "u.txt"), username: "no-such-user" }), {
        method: "POST",
        body: "x",
      }),
      401,
      "no-such-user",
    );
    const underFile = path.join(dir, "single.txt", "child.txt");
    await expectError(
      await call(filesUrl({ path: underFile }), { method: "POST", body: "x" }),
      400,
      "single.txt",
    );
  });

  test("a relative path resolves against the user's home", async () => {
    const name = `envd-http-test-${randomBytes(4).toString("hex")}.txt`;
    const res = await call(filesUrl({ path: name, username: "root" }), { method: "POST", body: "home" });
    try {
      expect(await res.json()).toEqual([{ path: `/root/${name}`, name, type: "file" }]);
      expect(readFileSync(`/root/${name}`, "utf8")).toBe("home");
    } finally {
      rmSync(`/root/${name}`, { force: true });
    }
  });
});

describe("GET /files", () => {
  const content = "download me\n".repeat(500);
  let file: string;

  beforeAll(() => {
    file = path.join(dir, "down load.txt");
    writeFileSync(file, content);
  });

  test("streams the file with type, length and disposition", async () => {
    const res = await call(filesUrl({ path: file }), { headers: { "Accept-Encoding": "identity" } });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toBe("application/octet-stream");
    expect(res.headers.get("content-length")).toBe(String(Buffer.byteLength(content)));
    expect(res.headers.get("content-disposition")).toBe(
      "attachment; filename=\"down load.txt\"; filename*=UTF-8''down%20load.txt",
    );
    expect(await res.text()).toBe(content);
  });

  test("fetch's default Accept-Encoding gets identity; an explicit gzip gets gzip", async () => {
    const plain = await call(filesUrl({ path: file }));
    expect(plain.headers.get("content-encoding")).toBeNull();
    expect(await plain.text()).toBe(content);

    const raw = await rawGet(filesUrl({ path: file }), {
      "accept-encoding": "gzip",
      "x-access-token": TOKEN,
    });
    expect(raw.status).toBe(200);
    expect(raw.headers["content-encoding"]).toBe("gzip");
    expect(raw.body.length).toBeLessThan(Buffer.byteLength(content));
    expect(gunzipSync(raw.body).toString()).toBe(content);

    await expectError(
      await call(filesUrl({ path: file }), { headers: { "Accept-Encoding": "identity;q=0, br" } }),
      406,
    );
  });

  test("a file past the small-read size streams whole, plain and gzip", async () => {
    const big = path.join(dir, "big.bin");
    const bytes = Buffer.alloc(3 * 1024 * 1024 + 17);
    for (let i = 0; i < bytes.length; i++) bytes[i] = (i * 7) % 251;
    writeFileSync(big, bytes);
    const plain = await call(filesUrl({ path: big }));
    expect(plain.headers.get("content-length")).toBe(String(bytes.length));
    expect(Buffer.from(await plain.arrayBuffer()).equals(bytes)).toBe(true);
    const raw = await rawGet(filesUrl({ path: big }), { "accept-encoding": "gzip", "x-access-token": TOKEN });
    expect(raw.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(raw.body).equals(bytes)).toBe(true);
  });

  test("an empty file answers Content-Length: 0", async () => {
    const empty = path.join(dir, "empty");
    writeFileSync(empty, "");
    const res = await call(filesUrl({ path: empty }));
    expect(res.headers.get("content-length")).toBe("0");
    expect(await res.text()).toBe("");
  });

  test("missing is 404, a directory 400, an unknown user 401, an unreadable file 500", async () => {
    const missing = path.join(dir, "missing.txt");
    await expectError(await call(filesUrl({ path: missing })), 404, `'${missing}' does not exist`);
    await expectError(await call(filesUrl({ path: dir })), 400, "is a directory");
    await expectError(await call(filesUrl({ path: file, username: "no-such-user" })), 401, "no-such-user");
    await expectError(await call(filesUrl({ path: UNREADABLE })), 500, UNREADABLE);
    await expectError(await call("/files"), 400, "path");
  });

  test("works over h2c too", async () => {
    const session = http2.connect(envd.url);
    try {
      const body = await new Promise<Buffer>((resolve, reject) => {
        const stream = session.request({ ":path": filesUrl({ path: file }), "x-access-token": TOKEN });
        const chunks: Buffer[] = [];
        stream.on("response", (headers) => expect(headers[":status"]).toBe(200));
        stream.on("data", (c: Buffer) => chunks.push(c));
        stream.on("end", () => resolve(Buffer.concat(chunks)));
        stream.on("error", reject);
        stream.end();
      });
      expect(body.toString()).toBe(content);
    } finally {
      session.close();
    }
  });
});

/** A GET whose body is not decoded by fetch, to see the bytes on the wire. */
function rawGet(route: string, headers: Record<string, string>) {
  return new Promise<{ status: number; headers: Record<string, unknown>; body: Buffer }>(
    (resolve, reject) => {
      const session = http2.connect(envd.url);
      const stream = session.request({ ":path": route, ...headers });
      const chunks: Buffer[] = [];
      let status = 0;
      let responseHeaders: Record<string, unknown> = {};
      stream.on("response", (h) => {
        status = Number(h[":status"]);
        responseHeaders = h;
      });
      stream.on("data", (c: Buffer) => chunks.push(c));
      stream.on("end", () => {
        session.close();
        resolve({ status, headers: responseHeaders, body: Buffer.concat(chunks) });
      });
      stream.on("error", reject);
      stream.end();
    },
  );
}

describe("signed URLs (the public client's downloadUrl/uploadUrl)", () => {
  let file: string;
  beforeAll(() => {
    file = path.join(dir, "signed.txt");
    writeFileSync(file, "signed content");
  });

  async function signed(
    operation: "read" | "write",
    params: { path: string; user?: string; expiresIn?: number },
  ) {
    const sig = await getSignature({
      path: params.path,
      operation,
      user: params.user,
      expirationInSeconds: params.expiresIn,
      envdAccessToken: TOKEN,
    });
    const query: Record<string, string> = { path: params.path, signature: sig.signature };
    if (params.user) query.username = params.user;
    if (sig.expiration) query.signature_expiration = String(sig.expiration);
    return filesUrl(query);
  }

  test("a valid read signature downloads without the token, with or without expiration", async () => {
    let res = await call(await signed("read", { path: file }), { token: null });
    expect(await res.text()).toBe("signed content");
    res = await call(await signed("read", { path: file, user: "root", expiresIn: 60 }), { token: null });
    expect(res.status).toBe(200);
  });

  test("a valid write signature uploads", async () => {
    const target = path.join(dir, "signed-upload.txt");
    const res = await call(await signed("write", { path: target, user: "nobody" }), {
      token: null,
      method: "POST",
      body: form([{ name: target, data: "via signature" }]),
    });
    expect(res.status).toBe(200);
    expect(readFileSync(target, "utf8")).toBe("via signature");
    expect(statSync(target).uid).toBe(NOBODY.uid);
  });

  test("expired, wrong, tampered and wrong-operation signatures are 401", async () => {
    const expired = await getSignature({
      path: file,
      operation: "read",
      user: undefined,
      envdAccessToken: TOKEN,
      expirationInSeconds: -10,
    });
    const expiredUrl = filesUrl({
      path: file,
      signature: expired.signature,
      signature_expiration: String(expired.expiration),
    });
    await expectError(await call(expiredUrl, { token: null }), 401, "expired");
    await expectError(
      await call(filesUrl({ path: file, signature: "v1_wrong" }), { token: null }),
      401,
      "signature",
    );
    const other = await getSignature({
      path: path.join(dir, "other.txt"),
      operation: "read",
      user: undefined,
      envdAccessToken: TOKEN,
    });
    await expectError(
      await call(filesUrl({ path: file, signature: other.signature }), { token: null }),
      401,
      "signature",
    );
    await expectError(
      await call(await signed("read", { path: file }), { token: null, method: "POST", body: "x" }),
      401,
    );
    // A token header that is present must be right, whatever the signature says.
    await expectError(
      await call(await signed("read", { path: file }), { token: "wrong" }),
      401,
      "access token",
    );
  });
});

describe("the public e2b client against envd", () => {
  let sandbox: Sandbox;
  beforeAll(() => {
    sandbox = new Sandbox({
      sandboxId: "http-test",
      envdVersion: ENVD_VERSION,
      envdAccessToken: TOKEN,
      sandboxUrl: envd.url,
    });
  });

  test("write and read a string, bytes, gzip both ways, several files and metadata", async () => {
    const one = path.join(dir, "e2b", "one.txt");
    expect(await sandbox.files.write(one, "from e2b", { user: "root" })).toMatchObject({
      path: one,
      name: "one.txt",
    });
    expect(await sandbox.files.read(one, { user: "root" })).toBe("from e2b");

    const bytes = randomBytes(100_000);
    const gz = path.join(dir, "e2b", "gz.bin");
    await sandbox.files.write(gz, new Blob([new Uint8Array(bytes)]), { user: "root", gzip: true });
    expect(readFileSync(gz).equals(bytes)).toBe(true);
    const back = await sandbox.files.read(gz, { user: "root", format: "bytes", gzip: true });
    expect(Buffer.from(back).equals(bytes)).toBe(true);

    const many = [path.join(dir, "e2b", "m1.txt"), path.join(dir, "e2b", "deep", "m2.txt")];
    const infos = await sandbox.files.write(
      many.map((p, i) => ({ path: p, data: `m${i}` })),
      { user: "nobody" },
    );
    expect(infos.map((i) => i.path)).toEqual(many);
    expect(readFileSync(many[1]!, "utf8")).toBe("m1");

    const meta = await sandbox.files.write(path.join(dir, "e2b", "meta.txt"), "m", {
      user: "root",
      metadata: { team: "x" },
    });
    expect(meta.metadata).toEqual({ team: "x" });

    const url = await sandbox.downloadUrl(one, { user: "root", useSignatureExpiration: 30 });
    expect(await (await fetch(url)).text()).toBe("from e2b");
  });

  test("a missing file is the client's FileNotFoundError", async () => {
    await expect(sandbox.files.read(path.join(dir, "nope"), { user: "root" })).rejects.toMatchObject({
      name: "FileNotFoundError",
    });
  });
});

describe("POST /files/compose", () => {
  let n = 0;
  function sources(contents: string[]): string[] {
    n += 1;
    return contents.map((c, i) => {
      const p = path.join(dir, `part-${n}-${i}`);
      writeFileSync(p, c);
      return p;
    });
  }

  function compose(body: unknown, init: { token?: string | null } = {}) {
    return call("/files/compose", {
      ...init,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: typeof body === "string" ? body : JSON.stringify(body),
    });
  }

  test("concatenates in order, owns the result by the user and deletes the sources", async () => {
    const big = randomBytes(3 * 1024 * 1024);
    const parts = sources(["alpha-", big.toString("base64"), "", "-omega"]);
    const destination = path.join(dir, "composed", "out.txt");
    const { data, response } = await envd.client.http.POST("/files/compose", {
      body: { source_paths: parts, destination, username: "nobody" },
    });
    expect(response.status).toBe(200);
    expect(data).toEqual({ path: destination, name: "out.txt", type: "file" });
    expect(readFileSync(destination, "utf8")).toBe(`alpha-${big.toString("base64")}-omega`);
    expect(statSync(destination)).toMatchObject({ uid: NOBODY.uid, gid: NOBODY.gid });
    expect(statSync(path.dirname(destination)).uid).toBe(NOBODY.uid);
    for (const p of parts) expect(existsSync(p)).toBe(false);
    expect(readdirSync(path.dirname(destination))).toEqual(["out.txt"]);
  });

  test("replaces an existing destination", async () => {
    const destination = path.join(dir, "compose-existing.txt");
    writeFileSync(destination, "previous");
    const res = await compose({ source_paths: sources(["a", "b"]), destination });
    expect(res.status).toBe(200);
    expect(readFileSync(destination, "utf8")).toBe("ab");
  });

  test("bad bodies are 400", async () => {
    const destination = path.join(dir, "never.txt");
    await expectError(await compose("{not json"), 400, "JSON");
    await expectError(await compose({ source_paths: [], destination }), 400, "source_paths");
    await expectError(await compose({ destination }), 400, "source_paths");
    await expectError(await compose({ source_paths: sources(["x"]) }), 400, "destination");
    expect(existsSync(destination)).toBe(false);
  });

  test("a directory source or destination is 400, and nothing is deleted", async () => {
    const parts = sources(["keep"]);
    await expectError(
      await compose({ source_paths: [...parts, dir], destination: path.join(dir, "d.txt") }),
      400,
      `'${dir}' is a directory`,
    );
    await expectError(
      await compose({ source_paths: parts, destination: dir }),
      400,
      `'${dir}' is a directory`,
    );
    expect(readFileSync(parts[0]!, "utf8")).toBe("keep");
  });

  test("an unknown user is 401", async () => {
    await expectError(
      await compose({
        source_paths: sources(["x"]),
        destination: path.join(dir, "u.txt"),
        username: "no-such-user",
      }),
      401,
      "no-such-user",
    );
  });

  test("a missing source is 404 and the others stay", async () => {
    const parts = sources(["stays"]);
    const missing = path.join(dir, "missing-source");
    const destination = path.join(dir, "m.txt");
    await expectError(await compose({ source_paths: [...parts, missing], destination }), 404, missing);
    expect(existsSync(parts[0]!)).toBe(true);
    expect(existsSync(destination)).toBe(false);
  });

  test("a source that cannot be opened is 500 and leaves no destination", async () => {
    const parts = sources(["stays"]);
    const destination = path.join(dir, "p.txt");
    await expectError(await compose({ source_paths: [...parts, UNREADABLE], destination }), 500, UNREADABLE);
    expect(existsSync(parts[0]!)).toBe(true);
    expect(existsSync(destination)).toBe(false);
  });
});

describe("out of space (1 MiB tmpfs)", () => {
  let small: string;
  beforeAll(() => {
    small = path.join(dir, "small");
    mkdirSync(small);
    execFileSync("mount", ["-t", "tmpfs", "-o", "size=1m", "tmpfs", small]);
  });
  afterAll(() => {
    if (small) execFileSync("umount", [small]);
  });

  test("an upload that does not fit is 507, removes its partial file and keeps the old one", async () => {
    const existing = path.join(small, "existing.txt");
    writeFileSync(existing, "precious");
    for (const file of [existing, path.join(small, "new.bin")]) {
      const res = await call(filesUrl({ path: file }), {
        method: "POST",
        headers: { "Content-Type": "application/octet-stream" },
        body: randomBytes(2 * 1024 * 1024),
      });
      await expectError(res, 507, file);
    }
    expect(readFileSync(existing, "utf8")).toBe("precious");
    expect(readdirSync(small)).toEqual(["existing.txt"]);

    const multipart = await call("/files", {
      method: "POST",
      body: form([{ name: path.join(small, "m.bin"), data: randomBytes(2 * 1024 * 1024) }]),
    });
    await expectError(multipart, 507, "m.bin");
    expect(readdirSync(small)).toEqual(["existing.txt"]);
  });

  test("a compose that does not fit is 507 and keeps the sources", async () => {
    const parts = [0, 1].map((i) => {
      const p = path.join(dir, `big-part-${i}`);
      writeFileSync(p, randomBytes(700 * 1024));
      return p;
    });
    const destination = path.join(small, "composed.bin");
    const res = await call("/files/compose", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ source_paths: parts, destination }),
    });
    await expectError(res, 507, destination);
    for (const p of parts) expect(existsSync(p)).toBe(true);
    expect(readdirSync(small)).toEqual(["existing.txt"]);
  });
});

describe("POST /init", () => {
  let fresh: RunningEnvd;
  beforeAll(async () => {
    fresh = await startEnvd();
  });
  afterAll(async () => {
    await fresh?.stop();
  });

  const init = (body: unknown, token?: string) =>
    fetch(`${fresh.url}/init`, {
      method: "POST",
      headers: { "Content-Type": "application/json", ...(token ? { "X-Access-Token": token } : {}) },
      body: JSON.stringify(body),
    });
  const envs = (token?: string) =>
    fetch(`${fresh.url}/envs`, { headers: token ? { "X-Access-Token": token } : {} });

  test("sets env vars, default user and the first token; older inits are ignored", async () => {
    const now = new Date().toISOString();
    let res = await init({
      accessToken: "first",
      envVars: { A: "1", B: "2" },
      defaultUser: "nobody",
      timestamp: now,
    });
    expect(res.status).toBe(204);
    await expectError(await envs(), 401);
    expect(await (await envs("first")).json()).toEqual({ A: "1", B: "2" });

    const file = path.join(dir, "init-default-user.txt");
    const written = await fetch(`${fresh.url}${filesUrl({ path: file })}`, {
      method: "POST",
      headers: { "X-Access-Token": "first" },
      body: form([{ name: file, data: "x" }]),
    });
    expect(written.status).toBe(200);
    expect(statSync(file).uid).toBe(NOBODY.uid);

    res = await init(
      { envVars: { A: "stale" }, timestamp: new Date(Date.parse(now) - 60_000).toISOString() },
      "first",
    );
    expect(res.status).toBe(204);
    expect(await (await envs("first")).json()).toEqual({ A: "1", B: "2" });
  });

  test("once a token is set, init needs it and can rotate it", async () => {
    await expectError(await init({ accessToken: "mine" }), 401);
    await expectError(await init({ accessToken: "mine" }, "wrong"), 401);
    expect((await init({ accessToken: "second", envVars: { C: "3" } }, "first")).status).toBe(204);
    await expectError(await envs("first"), 401);
    expect(await (await envs("second")).json()).toEqual({ A: "1", B: "2", C: "3" });
  });

  test("inside a sandbox, init gives E2B's identity variables and their run-dir files", async () => {
    const runDir = path.join(tempDir("envd-run-"), "e2b");
    const inBox = await startEnvd({ env: { ENVD_RUN_DIR: runDir } });
    try {
      const res = await fetch(`${inBox.url}/init`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ envVars: { E2B_SANDBOX_ID: "isbx", E2B_TEMPLATE_ID: "tpl", A: "1" } }),
      });
      expect(res.status).toBe(204);
      expect(await (await fetch(`${inBox.url}/envs`)).json()).toEqual({
        A: "1",
        E2B_SANDBOX: "true",
        E2B_SANDBOX_ID: "isbx",
        E2B_TEMPLATE_ID: "tpl",
      });
      expect(readFileSync(path.join(runDir, ".E2B_SANDBOX"), "utf8")).toBe("true");
      expect(readFileSync(path.join(runDir, ".E2B_SANDBOX_ID"), "utf8")).toBe("isbx");
      expect(readFileSync(path.join(runDir, ".E2B_TEMPLATE_ID"), "utf8")).toBe("tpl");
      expect(existsSync(path.join(runDir, ".E2B_TEAM_ID"))).toBe(false);
    } finally {
      await inBox.stop();
    }
  });

  test("a later init writes only the identity files whose values changed, remaking the run dir", async () => {
    const runDir = path.join(tempDir("envd-run-"), "e2b");
    const inBox = await startEnvd({ env: { ENVD_RUN_DIR: runDir } });
    const init = (envVars: Record<string, string>) =>
      fetch(`${inBox.url}/init`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ envVars }),
      });
    const file = (name: string) => path.join(runDir, `.${name}`);
    try {
      // a warm pool member's warm-up, then the create that takes it
      expect((await init({ E2B_SANDBOX_ID: "isbx" })).status).toBe(204);
      // an mtime of long ago: a rewrite within the same clock tick could not be told otherwise
      utimesSync(file("E2B_SANDBOX_ID"), new Date(2000, 0, 1), new Date(2000, 0, 1));
      const before = statSync(file("E2B_SANDBOX_ID"));
      expect(
        (await init({ E2B_SANDBOX_ID: "isbx", E2B_TEMPLATE_ID: "tpl", E2B_TEAM_ID: "team" })).status,
      ).toBe(204);
      expect(statSync(file("E2B_SANDBOX_ID")).mtimeMs).toBe(before.mtimeMs);
      expect(readFileSync(file("E2B_TEMPLATE_ID"), "utf8")).toBe("tpl");
      expect(readFileSync(file("E2B_TEAM_ID"), "utf8")).toBe("team");

      // the run dir removed inside the sandbox: a changed value makes it again
      rmSync(runDir, { recursive: true });
      expect((await init({ E2B_TEAM_ID: "other" })).status).toBe(204);
      expect(readFileSync(file("E2B_TEAM_ID"), "utf8")).toBe("other");
      expect(await (await fetch(`${inBox.url}/envs`)).json()).toMatchObject({ E2B_TEAM_ID: "other" });
    } finally {
      await inBox.stop();
    }
  });

  test("without a platform-given id the sandbox id is the hostname", async () => {
    const runDir = path.join(tempDir("envd-run-"), "e2b");
    const inBox = await startEnvd({ env: { ENVD_RUN_DIR: runDir } });
    try {
      expect((await fetch(`${inBox.url}/init`, { method: "POST" })).status).toBe(204);
      expect(readFileSync(path.join(runDir, ".E2B_SANDBOX_ID"), "utf8")).toBe(os.hostname());
    } finally {
      await inBox.stop();
    }
  });

  test("invalid bodies are 400", async () => {
    const res = await fetch(`${fresh.url}/init`, {
      method: "POST",
      headers: { "X-Access-Token": "second" },
      body: "{",
    });
    await expectError(res, 400, "JSON");
    await expectError(await init({ timestamp: "yesterday" }, "second"), 400, "timestamp");
    await expectError(await init({ envVars: { A: 1 } }, "second"), 400, "envVars");
  });
});
